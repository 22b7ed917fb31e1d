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
     * The units on one server, by state (the server's `units`): `placed` joins the unit table
     * (as `t`) to the accounts placed on the server given as `$1` (an owner's constant).
     */
    async countOnServer(db: Queryable, serverId: string, placed: string) {
      const r = await db.query<{ in_sync: number; pending: number; error: number; oldest_pending_at: string | null }>(
        `SELECT count(*) FILTER (WHERE t.sync_state = 'in_sync')::int AS in_sync,
           count(*) FILTER (WHERE t.sync_state = 'pending')::int AS pending,
           count(*) FILTER (WHERE t.sync_state = 'error')::int AS error,
           min(t.pending_since) AS oldest_pending_at
         FROM ${table} t ${placed}`,
        [serverId],
      );
      return r.rows[0] ?? { in_sync: 0, pending: 0, error: 0, oldest_pending_at: null };
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
