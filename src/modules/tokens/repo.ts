import { type Caller, type PrincipalKind, reachSql } from '../../auth/caller.js';
import type { Scope } from '../../auth/scopes.js';
import type { Queryable } from '../../db/client.js';
import { pageSql, type PageParams } from '../../db/paging.js';

export interface TokenRow {
  id: string;
  name: string;
  principal_kind: PrincipalKind;
  reseller_id: string | null;
  account_id: string | null;
  scopes: Scope[];
  account_ids: string[] | null;
  expires_at: string | null;
  allowed_ips: string[];
  last_used_at: string | null;
  prefix: string;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A token with what authentication needs about its principal. */
export interface ResolvedTokenRow extends TokenRow {
  effective_reseller_id: string | null;
  reseller_status: string | null;
}

const COLUMNS = `t.id, t.name, t.principal_kind, t.reseller_id, t.account_id, t.scopes, t.account_ids, t.expires_at,
  t.allowed_ips, t.last_used_at, t.prefix, t.created_at, t.updated_at, t.version`;
const FROM = `FROM tokens t LEFT JOIN accounts a ON a.id = t.account_id`;
const EFFECTIVE_RESELLER = 'coalesce(t.reseller_id, a.reseller_id)';

/** What creating a token writes: its row without what the database sets. */
export type NewTokenRow = Omit<TokenRow, 'last_used_at' | 'created_at' | 'updated_at' | 'version'> & {
  secret_hash: string;
  created_by: string | null;
};

export async function insertToken(tx: Queryable, t: NewTokenRow): Promise<TokenRow> {
  const r = await tx.query<TokenRow>(
    `INSERT INTO tokens AS t (id, name, principal_kind, reseller_id, account_id, scopes, account_ids, expires_at, allowed_ips, prefix, secret_hash, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (secret_hash) DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      t.id,
      t.name,
      t.principal_kind,
      t.reseller_id,
      t.account_id,
      t.scopes,
      t.account_ids,
      t.expires_at,
      t.allowed_ips,
      t.prefix,
      t.secret_hash,
      t.created_by,
    ],
  );
  return r.rows[0] as TokenRow;
}

export async function findBySecretHash(db: Queryable, hash: string): Promise<ResolvedTokenRow | undefined> {
  const r = await db.query<ResolvedTokenRow>(
    `SELECT ${COLUMNS}, ${EFFECTIVE_RESELLER} AS effective_reseller_id, r.status AS reseller_status
     ${FROM} LEFT JOIN resellers r ON r.id = ${EFFECTIVE_RESELLER}
     WHERE t.secret_hash = $1`,
    [hash],
  );
  return r.rows[0];
}

const reach = (caller: Caller, params: unknown[]) =>
  reachSql(caller, { account: 't.account_id', reseller: EFFECTIVE_RESELLER }, params);

export async function findToken(db: Queryable, caller: Caller, id: string): Promise<TokenRow | undefined> {
  const params: unknown[] = [id];
  const r = await db.query<TokenRow>(`SELECT ${COLUMNS} ${FROM} WHERE t.id = $1 AND ${reach(caller, params)}`, params);
  return r.rows[0];
}

export async function findTokenById(db: Queryable, id: string): Promise<TokenRow | undefined> {
  return (await db.query<TokenRow>(`SELECT ${COLUMNS} ${FROM} WHERE t.id = $1`, [id])).rows[0];
}

export async function listTokens(db: Queryable, caller: Caller, page: PageParams): Promise<TokenRow[]> {
  const params: unknown[] = [];
  const where = reach(caller, params);
  const p = pageSql(page, 't.id', params);
  const r = await db.query<TokenRow>(`SELECT ${COLUMNS} ${FROM} WHERE ${where} AND ${p.where} ${p.tail}`, params);
  return r.rows;
}

export async function deleteToken(tx: Queryable, id: string): Promise<{ secret_hash: string } | undefined> {
  const r = await tx.query<{ secret_hash: string }>('DELETE FROM tokens WHERE id = $1 RETURNING secret_hash', [id]);
  return r.rows[0];
}

export const touchLastUsed = (db: Queryable, id: string, at: string) =>
  db.query('UPDATE tokens SET last_used_at = $2 WHERE id = $1', [id, at]);

/** Serialises the first start of several processes on one database (any constant will do). */
export const lockBootstrap = (tx: Queryable) => tx.query('SELECT pg_advisory_xact_lock(748213902)');

export async function hasOperatorToken(db: Queryable): Promise<boolean> {
  const r = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM tokens WHERE principal_kind = 'operator'`);
  return (r.rows[0]?.n ?? 0) > 0;
}
