import type { Db, Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import { isAccountUsername } from '../../lib/account-username.js';
import type { AgentUnitSource } from '../../provisioning/agent-units.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { DatabaseDriver } from '../../provisioning/driver.js';
import type { DatabaseAccountSpec } from '../../provisioning/render/mariadb.js';
import { accountUnits, handedToAgent, LOCAL_SERVER_ID } from '../servers/index.js';
import * as repo from './repo.js';

/**
 * An account's database apply unit: all its databases, users and grants (a grant joins two of
 * them), rendered together, with its state in database_units. Its job data carries the username
 * so a unit whose account is gone can still be withdrawn by its prefix.
 */
export const databaseUnits = accountUnits('database_units', 'database', JOBS.databaseApply);

interface Unit {
  account_id: string;
  username: string;
  account_status: string;
  database_server_id: string;
  generation: number;
  applied_generation: number;
}

const UNIT_SELECT = `SELECT u.account_id, a.username, a.status AS account_status, a.database_server_id, u.generation,
    u.applied_generation
  FROM database_units u JOIN accounts a ON a.id = u.account_id`;

/** The unit as committed: FOR SHARE waits for a change still being written (jobs/names.ts, UNIT_KEYS). */
async function loadUnit(db: Queryable, accountId: string): Promise<{ unit: Unit; spec: DatabaseAccountSpec } | undefined> {
  const unit = (await db.query<Unit>(`${UNIT_SELECT} WHERE u.account_id = $1 FOR SHARE OF u`, [accountId])).rows[0];
  if (!unit) return undefined;
  return { unit, spec: await specOf(db, unit) };
}

/** Everything the database server must hold for the account. */
async function specOf(db: Queryable, unit: Unit): Promise<DatabaseAccountSpec> {
  const accountId = unit.account_id;
  const [databases, users, grants] = await Promise.all([
    repo.listOfAccount(db, 'databases', accountId),
    repo.listOfAccount(db, 'database_users', accountId),
    repo.grantsOfAccount(db, accountId),
  ]);
  // Only an active account's users log in: suspension (and termination under way) locks them.
  const accountActive = unit.account_status === 'active';
  return {
    prefix: `${unit.username}_`,
    databases: databases.map((d) => ({ name: d.name, charset: d.charset, collation: d.collation })),
    users: users.map((u) => ({
      username: u.username,
      passwordHash: u.password_hash,
      locked: !accountActive || u.status !== 'active',
    })),
    grants: grants.map((g) => ({ database: g.database_name, username: g.username, privileges: g.privileges })),
  };
}

/**
 * The `database.apply` job: makes the server hold exactly the account's databases, users and
 * grants and records their sizes; an account that is gone (terminated) has everything with its
 * prefix dropped. One apply of an account at a time across processes; failures are recorded on
 * the unit and retried by the queue.
 */
export function databaseReconciler(db: Db, driver: DatabaseDriver) {
  return async (data: Record<string, unknown>): Promise<void> => {
    const accountId = String(data.account_id);
    const username = String(data.username);
    if (!isAccountUsername(username)) throw new Error(`database.apply: not an account username: ${username.slice(0, 40)}`);
    await db.withSessionLock(`database.apply:${accountId}`, async () => {
      const loaded = await loadUnit(db, accountId);
      if (!loaded) {
        await driver.removeAccount(`${username}_`);
        return;
      }
      if (await handedToAgent(db, loaded.unit.database_server_id)) return;
      await applyUnit(
        loaded.unit,
        async () => repo.recordSizes(db, LOCAL_SERVER_ID, await driver.applyAccount(loaded.spec)),
        databaseUnits.marks(db, accountId),
      );
    });
  };
}

/** An account's databases, users and grants are one unit, with its state in database_units. */

/** The database units of the accounts placed on a server, as its agent pulls them and reports back. */
export const databaseAgentUnits: AgentUnitSource = {
  kind: 'database',
  async pending(db, serverId) {
    const units = (
      await db.query<Unit>(
        `${UNIT_SELECT} WHERE a.database_server_id = $1 AND u.applied_generation < u.generation ORDER BY u.account_id`,
        [serverId],
      )
    ).rows;
    return Promise.all(
      units.map(async (unit) => ({
        kind: 'database' as const,
        key: unit.account_id,
        generation: unit.generation,
        spec: await specOf(db, unit),
      })),
    );
  },
  report: (db, serverId, report) => databaseUnits.report(db, serverId, report),
  measured: (db, serverId, measurements) => repo.recordSizes(db, serverId, new Map(measurements.map((m) => [m.key, m.bytes]))),
};
