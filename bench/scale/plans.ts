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

const recording = <Q extends Queryable>(q: Q, seen: Statement[]): Q =>
  new Proxy(q, {
    get(target, prop, receiver) {
      if (prop === 'query')
        return (text: string, params: unknown[] = []) => {
          seen.push({ text, params });
          return target.query(text, params);
        };
      if (prop === 'transaction')
        return <T>(fn: (tx: Queryable) => Promise<T>) => (target as unknown as Db).transaction((tx) => fn(recording(tx, seen)));
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

/** The db, recording every statement run through it (or a transaction of it) into `seen`. */
export const recordingDb = (db: Db, seen: Statement[]): Db => recording(db, seen);

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

const seqScansIn = (node: PlanNode): string[] => [
  ...(node['Node Type'] === 'Seq Scan' ? [node['Relation Name'] ?? '?'] : []),
  ...(node.Plans ?? []).flatMap(seqScansIn),
];

/** Statements that read or change rows; the rest (BEGIN, SET, NOTIFY, SELECT without FROM) have no plan to check. */
const planned = (text: string) => /^\s*(WITH|SELECT|UPDATE|DELETE|INSERT)\b/i.test(text) && /\b(FROM|UPDATE|INTO)\b/i.test(text);

/** The tables each statement would read from start to end, where no index serves it. */
export async function sequentialScans(db: Db, statements: Statement[]): Promise<{ text: string; tables: string[] }[]> {
  const unique = new Map(statements.filter((s) => planned(s.text)).map((s) => [s.text, s]));
  const found: { text: string; tables: string[] }[] = [];
  for (const s of unique.values()) {
    const tables = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const r = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${s.text}`, s.params);
      return seqScansIn((r.rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
    });
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

/** Every scan of a table in a plan run with ANALYZE. */
const scansIn = (node: PlanNode): Scan[] => [
  ...(node['Relation Name']
    ? [
        {
          table: node['Relation Name'],
          node: node['Node Type'],
          rows:
            (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) +
            (node['Rows Removed by Filter'] ?? 0) +
            (node['Rows Removed by Index Recheck'] ?? 0),
        },
      ]
    : []),
  ...(node.Plans ?? []).flatMap(scansIn),
];

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
    const scans = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      await tx.query('SET LOCAL enable_bitmapscan = off');
      const r = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.text}`, s.params);
      return scansIn((r.rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
    });
    found.push(...scans.map((scan) => ({ text: s.text, ...scan })));
  }
  return found;
}
