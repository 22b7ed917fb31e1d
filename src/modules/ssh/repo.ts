import { reachSql, type Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { pageSql, type PageParams } from '../../db/paging.js';
import { ofOneAccount, perAccount } from '../../db/per-account.js';
import type { SshAccessMode } from '../../provisioning/render/ssh.js';

type SyncState = 'pending' | 'in_sync' | 'error';

export interface KeyFields {
  name: string;
  allowed_from: string[];
}

export interface KeyRow extends KeyFields {
  id: string;
  account_id: string;
  reseller_id: string | null;
  type: string;
  bits: number;
  fingerprint_sha256: string;
  comment: string | null;
  public_key: string;
  last_used_at: string | null;
  sync_state: SyncState;
  sync_error: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface AccessRow {
  access: SshAccessMode;
  generation: number;
  sync_state: SyncState;
  sync_error: string | null;
  updated_at: string;
}

const COLUMNS = `k.id, k.account_id, a.reseller_id, k.name, k.type, k.bits, k.fingerprint_sha256, k.comment, k.public_key,
  k.allowed_from, k.last_used_at, coalesce(u.sync_state, 'pending') AS sync_state, u.sync_error, k.created_at, k.updated_at, k.version`;
const FROM = `FROM ssh_keys k JOIN accounts a ON a.id = k.account_id LEFT JOIN ssh_units u ON u.account_id = k.account_id`;
const reach = (caller: Caller, params: unknown[]) => reachSql(caller, { account: 'a.id', reseller: 'a.reseller_id' }, params);

/** The account's access as stored (null: never set, so `disabled`). */
export async function findAccess(db: Queryable, accountId: string): Promise<AccessRow | undefined> {
  return (
    await db.query<AccessRow>(
      'SELECT access, generation, sync_state, sync_error, updated_at FROM ssh_units WHERE account_id = $1',
      [accountId],
    )
  ).rows[0];
}

export async function insertKey(
  tx: Queryable,
  k: Omit<KeyRow, 'reseller_id' | 'last_used_at' | 'sync_state' | 'sync_error' | 'created_at' | 'updated_at' | 'version'>,
): Promise<void> {
  await tx.query(
    `INSERT INTO ssh_keys (id, account_id, name, type, bits, fingerprint_sha256, comment, public_key, allowed_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [k.id, k.account_id, k.name, k.type, k.bits, k.fingerprint_sha256, k.comment, k.public_key, k.allowed_from],
  );
}

/** A key of the account, in the caller's reach. */
export async function findKey(db: Queryable, caller: Caller, accountId: string, id: string): Promise<KeyRow | undefined> {
  const params: unknown[] = [id, accountId];
  return (
    await db.query<KeyRow>(`SELECT ${COLUMNS} ${FROM} WHERE k.id = $1 AND k.account_id = $2 AND ${reach(caller, params)}`, params)
  ).rows[0];
}

export async function findKeyById(db: Queryable, id: string): Promise<KeyRow | undefined> {
  return (await db.query<KeyRow>(`SELECT ${COLUMNS} ${FROM} WHERE k.id = $1`, [id])).rows[0];
}

export async function listKeys(db: Queryable, accountId: string, page: PageParams): Promise<KeyRow[]> {
  const params: unknown[] = [accountId];
  const p = pageSql(page, 'k.id', params);
  return (await db.query<KeyRow>(`SELECT ${COLUMNS} ${FROM} WHERE k.account_id = $1 AND ${p.where} ${p.tail}`, params)).rows;
}

/** Every key of the account, oldest first (its SSH unit, its backup). */
export async function keysOfAccount(db: Queryable, accountId: string): Promise<KeyRow[]> {
  return (await db.query<KeyRow>(`SELECT ${COLUMNS} ${FROM} WHERE k.account_id = $1 ORDER BY k.id`, [accountId])).rows;
}

export const keyCounts = perAccount(
  'SELECT account_id, count(*)::int AS n FROM ssh_keys WHERE account_id = ANY($1::text[]) GROUP BY account_id',
);
export const countKeys = ofOneAccount(keyCounts);

export async function updateKey(tx: Queryable, id: string, version: number, f: KeyFields): Promise<boolean> {
  const r = await tx.query(
    `UPDATE ssh_keys SET name = $3, allowed_from = $4, updated_at = now(), version = version + 1 WHERE id = $1 AND version = $2`,
    [id, version, f.name, f.allowed_from],
  );
  return r.rowCount > 0;
}

export const deleteKey = (tx: Queryable, id: string) => tx.query('DELETE FROM ssh_keys WHERE id = $1', [id]);

/** Keys with these fingerprints on accounts whose web server is `serverId`, with their account's username. */
export async function keysByFingerprint(
  db: Queryable,
  serverId: string,
  fingerprints: string[],
): Promise<{ id: string; username: string; fingerprint_sha256: string }[]> {
  const r = await db.query<{ id: string; username: string; fingerprint_sha256: string }>(
    `SELECT k.id, a.username, k.fingerprint_sha256 FROM ssh_keys k JOIN accounts a ON a.id = k.account_id
     WHERE k.fingerprint_sha256 = ANY($1::text[]) AND a.web_server_id = $2`,
    [fingerprints, serverId],
  );
  return r.rows;
}

/** A login with the key: `last_used_at` moves on (never back), nothing else changes. */
export const markUsed = (db: Queryable, id: string, at: string) =>
  db.query(
    'UPDATE ssh_keys SET last_used_at = greatest(coalesce(last_used_at, $2::timestamptz), $2::timestamptz) WHERE id = $1',
    [id, at],
  );
