import type { Queryable } from './client.js';

/**
 * The state every apply unit keeps in its table: `generation` (bumped by each change),
 * `applied_generation`, `sync_state` and `sync_error`. `table` and `key` are the owning
 * module's constants, never input; the owner's SQL writes its own table through this.
 */
export function unitState(table: string, key: string) {
  return {
    /** How an apply of `id` is recorded: the generation applied (in sync unless it changed meanwhile), or why it failed. */
    marks: (db: Queryable, id: string) => ({
      applied: (generation: number) =>
        db.query(
          `UPDATE ${table} SET applied_generation = greatest(applied_generation, $2),
             sync_state = CASE WHEN generation <= $2 THEN 'in_sync' ELSE sync_state END, sync_error = NULL
           WHERE ${key} = $1`,
          [id, generation],
        ),
      failed: (message: string) =>
        db.query(`UPDATE ${table} SET sync_state = 'error', sync_error = $2 WHERE ${key} = $1`, [id, message.slice(0, 1000)]),
    }),
    /**
     * When the oldest unit still to apply on each of `serverIds` became pending (a server's
     * `oldest_pending_at`; its counts are kept by the database, migration 0044). `serverOf` is the
     * server of a unit `t`, a scalar subquery (the owner's constant) of single-table lookups: run
     * for each waiting unit (a partial index of them) on its own keys, never as a join, which the
     * planner may start from the accounts of a page of servers, with every domain they hold
     * (480,000 at a million).
     */
    async oldestPendingOn(db: Queryable, serverIds: string[], serverOf: string): Promise<Map<string, string>> {
      const r = await db.query<{ server_id: string; at: string }>(
        `SELECT server_id, min(pending_since) AS at
         FROM (SELECT ${serverOf} AS server_id, t.pending_since FROM ${table} t WHERE t.pending_since IS NOT NULL) waiting
         WHERE server_id = ANY($1) GROUP BY 1`,
        [serverIds],
      );
      return new Map(r.rows.map((row) => [row.server_id, row.at]));
    },
    /** How many of the units `where` picks (a condition on `t`, `$1` its value) their server has yet to apply. */
    async unapplied(db: Queryable, where: string, value: string): Promise<number> {
      const r = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} t WHERE ${where} AND t.applied_generation < t.generation`,
        [value],
      );
      return r.rows[0]?.n ?? 0;
    },
    /** Units whose last apply failed (the `berth_sync_errors` gauge). */
    async countErrors(db: Queryable): Promise<number> {
      return (
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE sync_state = 'error'`)).rows[0]?.n ?? 0
      );
    },
  };
}
