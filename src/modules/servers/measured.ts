import type { Queryable } from '../../db/client.js';
import type { AgentMeasurement } from '../../provisioning/agent-units.js';
import type { Role } from './schemas.js';

/**
 * Records what a server measured into `table`'s `column`, by `key`, for the rows of the accounts
 * placed on that server for `role` (another server's measurement changes nothing); `where` narrows
 * the rows (`t.kind = 'mailbox'`). A measurement, not a change: no new version. A row being
 * written meanwhile keeps its last measurement until the next: a measurement never waits for a
 * row's lock, so it cannot deadlock with a writer of several of an account's rows, each taking
 * them in its own order. The names are the owning module's constants, never input.
 */
export function measuredInto(o: { table: string; key: string; column: string; role: Role; where?: string }) {
  const sql = `UPDATE ${o.table} m SET ${o.column} = free.bytes
     FROM (SELECT t.id, v.bytes FROM unnest($1::text[], $2::bigint[]) AS v(key, bytes)
             JOIN ${o.table} t ON t.${o.key} = v.key JOIN accounts a ON a.id = t.account_id
           WHERE a.${o.role}_server_id = $3 AND t.${o.column} IS DISTINCT FROM v.bytes${o.where ? ` AND ${o.where}` : ''}
           FOR UPDATE OF t SKIP LOCKED) free
     WHERE m.id = free.id`;
  return async (db: Queryable, serverId: string, measured: readonly Pick<AgentMeasurement, 'key' | 'bytes'>[]): Promise<void> => {
    if (measured.length === 0) return;
    await db.query(sql, [measured.map((m) => m.key), measured.map((m) => m.bytes), serverId]);
  };
}
