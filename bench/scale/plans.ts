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
