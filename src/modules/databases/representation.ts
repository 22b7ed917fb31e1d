import type { Queryable } from '../../db/client.js';
import { publishResourceEvent } from '../publishing/index.js';
import * as repo from './repo.js';
import type { Database, DatabaseGrant, DatabaseUser } from './schemas.js';

/** The API representations (never a password or its hash). */
export const toDatabase = (r: repo.DatabaseRow): Database => ({
  id: r.id,
  account_id: r.account_id,
  name: r.name,
  engine: 'mariadb' as const,
  charset: r.charset,
  collation: r.collation,
  size_bytes: r.size_bytes,
  // A database is reachable while its account is active; suspension locks every user of the account.
  status: r.account_status === 'suspended' ? ('suspended' as const) : ('active' as const),
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

export const toGrant = (g: repo.GrantRow): DatabaseGrant => ({
  id: g.user_id,
  username: g.username,
  database_id: g.database_id,
  database: g.database_name,
  privileges: g.privileges,
  created_at: g.created_at,
  updated_at: g.updated_at,
  version: g.version,
});

const toDatabaseUser = (r: repo.UserRow, grants: repo.GrantRow[]): DatabaseUser => ({
  id: r.id,
  account_id: r.account_id,
  username: r.username,
  status: r.status,
  grants: grants.map((g) => ({ database_id: g.database_id, database: g.database_name, privileges: g.privileges })),
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

export const presentUser = async (db: Queryable, r: repo.UserRow): Promise<DatabaseUser> =>
  toDatabaseUser(r, await repo.listGrants(db, { user_id: r.id }));

/** `database.<action>` or `database_user.<action>`, written in the change's transaction. */
export async function databaseEvent(
  tx: Queryable,
  type: 'database' | 'database_user',
  action: 'created' | 'updated' | 'deleted',
  r: { id: string; account_id: string; reseller_id: string | null; version: number },
  data: Database | DatabaseUser,
): Promise<void> {
  await publishResourceEvent(tx, `${type}.${action}`, type, r, data);
}
