import { reachSql, type Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, pageOfIds, type PageParams, pageSql } from '../../db/paging.js';
import { ofOneAccount, type PerAccount, perAccount } from '../../db/per-account.js';
import { measuredInto } from '../servers/index.js';

type SyncState = 'pending' | 'in_sync' | 'error';

interface Owned {
  id: string;
  account_id: string;
  reseller_id: string | null;
  account_username: string;
  account_status: string;
  sync_state: SyncState;
  sync_error: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface DatabaseRow extends Owned {
  name: string;
  charset: string;
  collation: string;
  size_bytes: number;
}

export interface UserRow extends Owned {
  username: string;
  password_hash: string;
  status: 'active' | 'suspended';
}

export interface GrantRow {
  account_id: string;
  database_id: string;
  database_name: string;
  user_id: string;
  username: string;
  privileges: string[];
  created_at: string;
  updated_at: string;
  version: number;
}

// The sync state is the account's unit: its databases, users and grants are applied together.
const OWNER = `d.reseller_id, a.username AS account_username, a.status AS account_status,
    coalesce(u.sync_state, 'pending') AS sync_state, u.sync_error`;
const SELECT_DATABASE = `SELECT d.id, d.account_id, d.name, d.charset, d.collation_name AS collation, d.size_bytes::float8 AS size_bytes,
    d.created_at, d.updated_at, d.version, ${OWNER}
  FROM databases d JOIN accounts a ON a.id = d.account_id LEFT JOIN database_units u ON u.account_id = d.account_id`;
const SELECT_USER = `SELECT d.id, d.account_id, d.username, d.password_hash, d.status, d.created_at, d.updated_at, d.version, ${OWNER}
  FROM database_users d JOIN accounts a ON a.id = d.account_id LEFT JOIN database_units u ON u.account_id = d.account_id`;
const SELECT_GRANT = `SELECT g.account_id, g.database_id, d.name AS database_name, g.user_id, du.username, g.privileges,
    g.created_at, g.updated_at, g.version
  FROM database_grants g JOIN databases d ON d.id = g.database_id JOIN database_users du ON du.id = g.user_id`;

const reach = (caller: Caller, params: unknown[]) =>
  reachSql(caller, { account: 'd.account_id', reseller: 'd.reseller_id' }, params);

export type Table = 'databases' | 'database_users';
const SELECTS = { databases: SELECT_DATABASE, database_users: SELECT_USER } as const;
type RowOf<T extends Table> = T extends 'databases' ? DatabaseRow : UserRow;

export async function findInReach<T extends Table>(
  db: Queryable,
  caller: Caller,
  table: T,
  id: string,
): Promise<RowOf<T> | undefined> {
  const params: unknown[] = [id];
  return (await db.query<RowOf<T>>(`${SELECTS[table]} WHERE d.id = $1 AND ${reach(caller, params)}`, params)).rows[0];
}

export async function findById<T extends Table>(
  db: Queryable,
  table: T,
  id: string,
  forUpdate = false,
): Promise<RowOf<T> | undefined> {
  return (await db.query<RowOf<T>>(`${SELECTS[table]} WHERE d.id = $1${forUpdate ? ' FOR UPDATE OF d' : ''}`, [id])).rows[0];
}

export async function findByName<T extends Table>(db: Queryable, table: T, name: string): Promise<RowOf<T> | undefined> {
  const column = table === 'databases' ? 'name' : 'username';
  return (await db.query<RowOf<T>>(`${SELECTS[table]} WHERE d.${column} = $1`, [name])).rows[0];
}

export async function listInReach<T extends Table>(
  db: Queryable,
  caller: Caller,
  table: T,
  f: { account_id?: string; q?: string },
  page: PageParams,
): Promise<RowOf<T>[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params)];
  where.push(...equalityFilters(f, ['account_id'], 'd.', params));
  if (f.q) where.push(`strpos(d.${table === 'databases' ? 'name' : 'username'}, lower($${params.push(f.q)})) > 0`);
  const p = pageOfIds(table, 'd', where, page, params);
  return (await db.query<RowOf<T>>(`${SELECTS[table]} WHERE ${p.where} ${p.tail}`, params)).rows;
}

export async function listOfAccount<T extends Table>(db: Queryable, table: T, accountId: string): Promise<RowOf<T>[]> {
  return (await db.query<RowOf<T>>(`${SELECTS[table]} WHERE d.account_id = $1 ORDER BY d.id`, [accountId])).rows;
}

// The table names come from the Table type, never from input.
export const counts: Record<Table, PerAccount> = {
  databases: perAccount(
    'SELECT account_id, count(*)::int AS n FROM databases WHERE account_id = ANY($1::text[]) GROUP BY account_id',
  ),
  database_users: perAccount(
    'SELECT account_id, count(*)::int AS n FROM database_users WHERE account_id = ANY($1::text[]) GROUP BY account_id',
  ),
};
export const count = (db: Queryable, table: Table, accountId: string) => ofOneAccount(counts[table])(db, accountId);

export const remove = (tx: Queryable, table: Table, id: string) => tx.query(`DELETE FROM ${table} WHERE id = $1`, [id]);

export const insertDatabase = (tx: Queryable, d: Pick<DatabaseRow, 'id' | 'account_id' | 'name' | 'charset' | 'collation'>) =>
  tx.query('INSERT INTO databases (id, account_id, name, charset, collation_name) VALUES ($1, $2, $3, $4, $5)', [
    d.id,
    d.account_id,
    d.name,
    d.charset,
    d.collation,
  ]);

/** Writes the fields if the row is still at `version` (undefined: whatever it is); false when it moved on. */
export async function updateDatabase(
  tx: Queryable,
  id: string,
  version: number | undefined,
  f: Pick<DatabaseRow, 'charset' | 'collation'>,
): Promise<boolean> {
  const r = await tx.query(
    `UPDATE databases SET charset = $3, collation_name = $4, updated_at = now(), version = version + 1
     WHERE id = $1 AND ($2::int IS NULL OR version = $2)`,
    [id, version ?? null, f.charset, f.collation],
  );
  return r.rowCount === 1;
}

export const insertUser = (tx: Queryable, u: Pick<UserRow, 'id' | 'account_id' | 'username' | 'password_hash' | 'status'>) =>
  tx.query('INSERT INTO database_users (id, account_id, username, password_hash, status) VALUES ($1, $2, $3, $4, $5)', [
    u.id,
    u.account_id,
    u.username,
    u.password_hash,
    u.status,
  ]);

export async function updateUser(
  tx: Queryable,
  id: string,
  version: number | undefined,
  f: Pick<UserRow, 'password_hash' | 'status'>,
): Promise<boolean> {
  const r = await tx.query(
    `UPDATE database_users SET password_hash = $3, status = $4, updated_at = now(), version = version + 1
     WHERE id = $1 AND ($2::int IS NULL OR version = $2)`,
    [id, version ?? null, f.password_hash, f.status],
  );
  return r.rowCount === 1;
}

/** The grants of one database (keyset-paged by user id) or of one user. */
export async function listGrants(db: Queryable, by: { database_id: string } | { user_id: string }, page?: PageParams) {
  const params: unknown[] = ['database_id' in by ? by.database_id : by.user_id];
  const where = 'database_id' in by ? 'g.database_id = $1' : 'g.user_id = $1';
  if (!page) return (await db.query<GrantRow>(`${SELECT_GRANT} WHERE ${where} ORDER BY d.name`, params)).rows;
  const p = pageSql(page, 'g.user_id', params);
  return (await db.query<GrantRow>(`${SELECT_GRANT} WHERE ${where} AND ${p.where} ${p.tail}`, params)).rows;
}

export async function grantsOfAccount(db: Queryable, accountId: string): Promise<GrantRow[]> {
  return (await db.query<GrantRow>(`${SELECT_GRANT} WHERE g.account_id = $1 ORDER BY d.name, du.username`, [accountId])).rows;
}

/** Inserts or replaces a grant; true when it is new. */
export async function putGrant(
  tx: Queryable,
  g: Pick<GrantRow, 'account_id' | 'database_id' | 'user_id' | 'privileges'>,
): Promise<boolean> {
  const r = await tx.query<{ created: boolean }>(
    `INSERT INTO database_grants (account_id, database_id, user_id, privileges) VALUES ($1, $2, $3, $4)
     ON CONFLICT (database_id, user_id) DO UPDATE SET privileges = EXCLUDED.privileges, updated_at = now(),
       version = database_grants.version + 1
     RETURNING (xmax = 0) AS created`,
    [g.account_id, g.database_id, g.user_id, g.privileges],
  );
  return r.rows[0]?.created === true;
}

export async function deleteGrant(tx: Queryable, databaseId: string, userId: string): Promise<boolean> {
  return (
    (await tx.query('DELETE FROM database_grants WHERE database_id = $1 AND user_id = $2', [databaseId, userId])).rowCount === 1
  );
}

/** Bytes of the account's databases as last measured (they count against its disk quota). */
export const databaseBytes = perAccount(
  'SELECT account_id, coalesce(sum(size_bytes), 0)::float8 AS n FROM databases WHERE account_id = ANY($1::text[]) GROUP BY account_id',
);

const recordMeasured = measuredInto({ table: 'databases', key: 'name', column: 'size_bytes', role: 'database' });

/** Records sizes a server measured, by database name, for the accounts placed on that server. */
export const recordSizes = (db: Queryable, serverId: string, sizes: Map<string, number>): Promise<void> =>
  recordMeasured(
    db,
    serverId,
    [...sizes].map(([key, bytes]) => ({ key, bytes })),
  );
