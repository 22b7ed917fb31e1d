/**
 * Query plans: a Db that records what it is asked, and EXPLAIN of each recorded statement with
 * sequential scans priced out (`enable_seqscan = off`), so that a table too small to need its
 * index still shows whether one could serve the query. A Seq Scan left in such a plan means no
 * index fits: at a million rows that statement reads the whole table.
 */
import type { Db, Queryable } from '../../src/db/client.js';

export interface Statement {
  text: string;
  params: unknown[];
}

const recording = <Q extends Queryable>(q: Q, record: (s: Statement) => void): Q =>
  new Proxy(q, {
    get(target, prop, receiver) {
      if (prop === 'query')
        return (text: string, params: unknown[] = []) => {
          record({ text, params });
          return target.query(text, params);
        };
      if (prop === 'transaction')
        return <T>(fn: (tx: Queryable) => Promise<T>) => (target as unknown as Db).transaction((tx) => fn(recording(tx, record)));
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

/** The db, handing every statement run through it (or a transaction of it) to `record`. */
export const recordingDb = (db: Db, record: (s: Statement) => void): Db => recording(db, record);

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** A plan's nodes, the root first. */
const nodesIn = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesIn)];

/** A statement's plan with the given scan kinds priced out (`seqscan`, `bitmapscan`), run too with `analyze`. */
async function planOf(db: Db, s: Statement, off: string[], analyze = false): Promise<PlanNode[]> {
  return db.transaction(async (tx) => {
    for (const kind of off) await tx.query(`SET LOCAL enable_${kind} = off`);
    const r = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (${analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${s.text}`,
      s.params,
    );
    return nodesIn((r.rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
  });
}

/** Statements that read or change rows; the rest (BEGIN, SET, NOTIFY, SELECT without FROM) have no plan to check. */
const planned = (text: string) => /^\s*(WITH|SELECT|UPDATE|DELETE|INSERT)\b/i.test(text) && /\b(FROM|UPDATE|INTO)\b/i.test(text);

/** The tables each statement would read from start to end, where no index serves it. */
export async function sequentialScans(db: Db, statements: Statement[]): Promise<{ text: string; tables: string[] }[]> {
  const unique = new Map(statements.filter((s) => planned(s.text)).map((s) => [s.text, s]));
  const found: { text: string; tables: string[] }[] = [];
  for (const s of unique.values()) {
    const tables = (await planOf(db, s, ['seqscan']))
      .filter((n) => n['Node Type'] === 'Seq Scan')
      .map((n) => n['Relation Name'] ?? '?');
    if (tables.length) found.push({ text: s.text, tables });
  }
  return found;
}

export interface Scan {
  table: string;
  /** `Index Only Scan`, `Index Scan`, … */
  node: string;
  /** The rows it read: returned, or passed over by a filter. */
  rows: number;
}

/**
 * What each read-only statement's scans read, run (EXPLAIN ANALYZE) with sequential and bitmap
 * scans priced out (both read every matching row before the page is sorted out of them: a small
 * table's choice, not a million rows'): the kind of scan, and its rows. A page read from an index
 * bounded by the caller's reach reads about a page; one that walks the whole table newest first
 * and filters reads what the table holds above the caller's rows.
 */
export async function rowsRead(db: Db, statements: Statement[]): Promise<(Scan & { text: string })[]> {
  const reads = statements.filter((s) => /^\s*SELECT\b/i.test(s.text) && /\bFROM\b/i.test(s.text));
  const found: (Scan & { text: string })[] = [];
  for (const s of reads) {
    for (const n of await planOf(db, s, ['seqscan', 'bitmapscan'], true)) {
      if (!n['Relation Name']) continue;
      found.push({
        text: s.text,
        table: n['Relation Name'],
        node: n['Node Type'],
        rows:
          (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1) +
          (n['Rows Removed by Filter'] ?? 0) +
          (n['Rows Removed by Index Recheck'] ?? 0),
      });
    }
  }
  return found;
}
