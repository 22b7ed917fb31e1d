import type { Db, Queryable } from '../../db/client.js';
import { unitState } from '../../db/unit-state.js';
import type { JobQueue } from '../../jobs/queue.js';
import { isAccountUsername } from '../../lib/account-username.js';
import type { AgentUnit, AgentUnitKind, AgentUnitSource } from '../../provisioning/agent-units.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { Role } from './schemas.js';
import { handedToAgent } from './wake.js';

/**
 * The account's status as its servers serve it: `frozen` while a move copies it for its cutover
 * (its sites answer 503, its database users and mailbox logins are refused, its cron jobs and
 * SSH access stop, as for a suspension), else its status. The SQL for a unit's select joining
 * `accounts a`: the units read it as `account_status`.
 */
export const SERVED_STATUS = `CASE WHEN a.frozen_at IS NOT NULL AND a.status = 'active' THEN 'frozen' ELSE a.status END`;

/** An account's unit as its apply reads it: the account's name and state, the server it lives on, its generations. */
export interface AccountUnitRow {
  account_id: string;
  username: string;
  account_status: string;
  server_id: string;
  generation: number;
  applied_generation: number;
}

type SpecOf<K extends AgentUnitKind> = Extract<AgentUnit, { kind: K }>['spec'];

/**
 * An apply unit keyed by account, applied by the server of one of the account's roles (its
 * databases on its database server, its cron file and SSH access on its web server). `table`,
 * `queue` and the extra `columns` and `joins` its rows are read with are the owning module's
 * constants, never input; the owner's SQL writes its own table through this, as through
 * `unitState`.
 */
export function accountUnits<K extends AgentUnitKind, U extends AccountUnitRow = AccountUnitRow>(o: {
  table: string;
  role: Role;
  queue: string;
  kind: K;
  columns?: string;
  joins?: string;
}) {
  const { table, queue } = o;
  const state = unitState(table, 'account_id');
  const server = `${o.role}_server_id`;
  const from = `FROM ${table} u JOIN accounts a ON a.id = u.account_id ${o.joins ?? ''}`;
  const select = `SELECT u.account_id, a.username, ${SERVED_STATUS} AS account_status, a.${server} AS server_id, u.generation,
      u.applied_generation${o.columns ?? ''} ${from}`;
  /** The units its server's agent has yet to apply, of the server `$1`. */
  const pendingOn = `WHERE a.${server} = $1 AND u.applied_generation < u.generation`;

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

    /**
     * Renders again the units of the accounts on a plan (a plan's limits changed), but for those
     * whose own override of the limit `unlessOverridden` names outranks the plan's.
     */
    async touchOnPlan(tx: Queryable, jobs: JobQueue, planId: string, unlessOverridden?: string): Promise<void> {
      const r = await tx.query<{ account_id: string; username: string; server_id: string }>(
        `UPDATE ${table} u SET generation = generation + 1, sync_state = 'pending' FROM accounts a
         WHERE a.id = u.account_id AND a.plan_id = $1 AND ($2::text IS NULL OR NOT a.limit_overrides ? $2)
         RETURNING a.id AS account_id, a.username, a.${server} AS server_id`,
        [planId, unlessOverridden ?? null],
      );
      for (const serverId of new Set(r.rows.map((row) => row.server_id))) await wakeOnCommit(tx, serverId);
      for (const row of r.rows) await jobs.send(tx, queue, { account_id: row.account_id, username: row.username });
    },

    /**
     * The apply job: the unit as committed (read FOR SHARE, which waits for a change still being
     * written: jobs/names.ts, UNIT_KEYS) applied here unless another server's agent applies it;
     * a unit whose account is gone withdrawn by the username the job carries. One apply of an
     * account at a time across processes; failures are recorded on the unit and retried.
     */
    reconciler(db: Db, how: { apply: (unit: U) => Promise<unknown>; remove: (username: string) => Promise<void> }) {
      return async (data: Record<string, unknown>): Promise<void> => {
        const accountId = String(data.account_id);
        const username = String(data.username);
        if (!isAccountUsername(username)) throw new Error(`${queue}: not an account username: ${username.slice(0, 40)}`);
        await db.withSessionLock(`${queue}:${accountId}`, async () => {
          const unit = (await db.query<U>(`${select} WHERE u.account_id = $1 FOR SHARE OF u`, [accountId])).rows[0];
          if (!unit) return how.remove(username);
          if (await handedToAgent(db, unit.server_id)) return;
          await applyUnit(unit, () => how.apply(unit), state.marks(db, accountId));
        });
      };
    },

    /** The units of the accounts placed on a server, as its agent pulls them (`specOf` each) and reports back. */
    agentSource(specOf: (db: Queryable, unit: U) => Promise<SpecOf<K>>): Pick<
      AgentUnitSource,
      'pending' | 'report' | 'waiting'
    > & {
      kind: K;
    } {
      return {
        kind: o.kind,
        waiting: `EXISTS (SELECT 1 ${from} ${pendingOn})`,
        async pending(db, serverId) {
          const units = (await db.query<U>(`${select} ${pendingOn} ORDER BY u.account_id`, [serverId])).rows;
          return Promise.all(
            units.map(
              async (unit) =>
                ({ kind: o.kind, key: unit.account_id, generation: unit.generation, spec: await specOf(db, unit) }) as AgentUnit,
            ),
          );
        },
        async report(db, serverId, report) {
          const unit = (await db.query<U>(`${select} WHERE u.account_id = $1`, [report.key])).rows[0];
          if (!unit || unit.server_id !== serverId) return 'foreign';
          if (report.generation > unit.generation) return 'future';
          const marks = state.marks(db, report.key);
          await (report.error === undefined ? marks.applied(report.generation) : marks.failed(report.error));
          return 'recorded';
        },
      };
    },

    /** The oldest unit still to apply on each of the servers (their `units.oldest_pending_at`). */
    oldestPendingOn: (db: Queryable, serverIds: string[]) =>
      state.oldestPendingOn(db, serverIds, `(SELECT a.${server} FROM accounts a WHERE a.id = t.account_id)`),
  };
}
