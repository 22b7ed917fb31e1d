import type { Db, Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { AgentUnitSource } from '../../provisioning/agent-units.js';
import type { DatabaseDriver } from '../../provisioning/driver.js';
import type { DatabaseAccountSpec } from '../../provisioning/render/mariadb.js';
import { findAccountById, limitsOf } from '../accounts/index.js';
import { type AccountUnitRow, accountUnits, LOCAL_SERVER_ID } from '../servers/index.js';
import * as repo from './repo.js';

/**
 * An account's database apply unit: all its databases, users and grants (a grant joins two of
 * them), rendered together, with its state in database_units. Its job data carries the username
 * so a unit whose account is gone can still be withdrawn by its prefix.
 */
export const databaseUnits = accountUnits({
  table: 'database_units',
  role: 'database',
  queue: JOBS.databaseApply,
  kind: 'database',
});

/** Everything the database server must hold for the account. */
async function specOf(db: Queryable, unit: AccountUnitRow): Promise<DatabaseAccountSpec> {
  const accountId = unit.account_id;
  const [databases, users, grants, account] = await Promise.all([
    repo.listOfAccount(db, 'databases', accountId),
    repo.listOfAccount(db, 'database_users', accountId),
    repo.grantsOfAccount(db, accountId),
    findAccountById(db, accountId),
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
    ...(account && { maxUserConnections: limitsOf(account).max_database_connections }),
  };
}

/**
 * The `database.apply` job: makes the server hold exactly the account's databases, users and
 * grants and records their sizes; an account that is gone (terminated) has everything with its
 * prefix dropped.
 */
export const databaseReconciler = (db: Db, driver: DatabaseDriver) =>
  databaseUnits.reconciler(db, {
    apply: async (unit) => repo.recordSizes(db, LOCAL_SERVER_ID, await driver.applyAccount(await specOf(db, unit))),
    remove: (username) => driver.removeAccount(`${username}_`),
  });

/** The database units of the accounts placed on a server, as its agent pulls them and reports back. */
export const databaseAgentUnits: AgentUnitSource = {
  ...databaseUnits.agentSource(specOf),
  measured: (db, serverId, measurements) => repo.recordSizes(db, serverId, new Map(measurements.map((m) => [m.key, m.bytes]))),
};
