import type { Queryable } from '../../db/client.js';
import { unitState } from '../../db/unit-state.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { AgentReport } from '../../provisioning/agent-units.js';
import type { Role } from './schemas.js';
import { handedToAgent } from './wake.js';

/**
 * An apply unit keyed by account, applied by the server of one of the account's roles (its
 * databases on its database server, its cron file and SSH access on its web server). `table` and
 * `queue` are the owning module's constants, never input; the owner's SQL writes its own table
 * through this, as through `unitState`.
 */
export function accountUnits(table: string, role: Role, queue: string) {
  const state = unitState(table, 'account_id');
  const server = `${role}_server_id`;

  /** Another server's agent pulls the change as the transaction commits, not after its apply job. */
  const wakeOnCommit = async (tx: Queryable, serverId: string | undefined) => {
    if (serverId) await handedToAgent(tx, serverId);
  };

  return {
    ...state,

    /**
     * Marks the account's unit changed inside the caller's transaction (setting `columns`, the
     * owner's constants, when given) and queues its apply; the job data carries the username so
     * that a unit whose account is gone can still be withdrawn.
     */
    async touch(
      tx: Queryable,
      jobs: JobQueue,
      account: { id: string; username: string },
      columns: Record<string, unknown> = {},
    ): Promise<void> {
      const names = Object.keys(columns);
      const r = await tx.query<{ server_id: string }>(
        `INSERT INTO ${table} (account_id${names.map((n) => `, ${n}`).join('')})
         VALUES ($1${names.map((_, i) => `, $${i + 2}`).join('')})
         ON CONFLICT (account_id) DO UPDATE SET generation = ${table}.generation + 1, sync_state = 'pending'
           ${names.map((n) => `, ${n} = excluded.${n}`).join('')}
         RETURNING (SELECT ${server} FROM accounts WHERE id = $1) AS server_id`,
        [account.id, ...Object.values(columns)],
      );
      await wakeOnCommit(tx, r.rows[0]?.server_id);
      await jobs.send(tx, queue, { account_id: account.id, username: account.username });
    },

    /** Renders the unit again if the account has one (a suspension, a termination, a new plan). */
    async touchExisting(tx: Queryable, jobs: JobQueue, accountId: string): Promise<void> {
      const r = await tx.query<{ username: string; server_id: string }>(
        `UPDATE ${table} u SET generation = generation + 1, sync_state = 'pending' FROM accounts a
         WHERE u.account_id = $1 AND a.id = u.account_id RETURNING a.username, a.${server} AS server_id`,
        [accountId],
      );
      const username = r.rows[0]?.username;
      await wakeOnCommit(tx, r.rows[0]?.server_id);
      if (username) await jobs.send(tx, queue, { account_id: accountId, username });
    },

    /** Renders again the units of the accounts on a plan (a plan's limits changed). */
    async touchOnPlan(tx: Queryable, jobs: JobQueue, planId: string): Promise<void> {
      const r = await tx.query<{ account_id: string; username: string; server_id: string }>(
        `UPDATE ${table} u SET generation = generation + 1, sync_state = 'pending' FROM accounts a
         WHERE a.id = u.account_id AND a.plan_id = $1 RETURNING a.id AS account_id, a.username, a.${server} AS server_id`,
        [planId],
      );
      for (const server of new Set(r.rows.map((row) => row.server_id))) await wakeOnCommit(tx, server);
      for (const row of r.rows) await jobs.send(tx, queue, { account_id: row.account_id, username: row.username });
    },

    /** What a server's agent reported of the unit: recorded if the account's unit is that server's and the generation known. */
    async report(db: Queryable, serverId: string, report: AgentReport): Promise<'recorded' | 'foreign' | 'future'> {
      const unit = (
        await db.query<{ generation: number; server_id: string }>(
          `SELECT u.generation, a.${server} AS server_id FROM ${table} u JOIN accounts a ON a.id = u.account_id
           WHERE u.account_id = $1`,
          [report.key],
        )
      ).rows[0];
      if (!unit || unit.server_id !== serverId) return 'foreign';
      if (report.generation > unit.generation) return 'future';
      const marks = state.marks(db, report.key);
      await (report.error === undefined ? marks.applied(report.generation) : marks.failed(report.error));
      return 'recorded';
    },

    /** The units of the accounts placed on a server, by state (the server's `units`). */
    countPlacedOn: (db: Queryable, serverId: string) =>
      state.countOnServer(db, serverId, `JOIN accounts a ON a.id = t.account_id AND a.${server} = $1`),
  };
}
