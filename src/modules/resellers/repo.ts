import type { Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, type PageParams, pageSql } from '../../db/paging.js';
import type { Reseller, ResellerFields, ResellerListQuery } from './schemas.js';

/** A row of resellers holds what the API shows. */
export type ResellerRow = Reseller;

/** Operators see every reseller; a reseller sees itself; accounts see none. */
function reach(caller: Caller, params: unknown[]): string {
  if (caller.principal.kind === 'operator') return 'TRUE';
  if (caller.principal.kind === 'account') return 'FALSE';
  params.push(caller.principal.id);
  return `id = $${params.length}`;
}

export async function insertReseller(tx: Queryable, id: string, f: ResellerFields): Promise<ResellerRow> {
  const r = await tx.query<ResellerRow>(
    'INSERT INTO resellers (id, name, contact_email, status, max_accounts) VALUES ($1, $2, $3, $4, $5) RETURNING *',
    [id, f.name, f.contact_email, f.status, f.max_accounts],
  );
  return r.rows[0] as ResellerRow;
}

export async function findReseller(db: Queryable, caller: Caller, id: string): Promise<ResellerRow | undefined> {
  const params: unknown[] = [id];
  const r = await db.query<ResellerRow>(`SELECT * FROM resellers WHERE id = $1 AND ${reach(caller, params)}`, params);
  return r.rows[0];
}

export async function listResellers(
  db: Queryable,
  caller: Caller,
  filter: Omit<ResellerListQuery, 'limit' | 'cursor'>,
  page: PageParams,
): Promise<ResellerRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params)];
  where.push(...equalityFilters(filter, ['status'], '', params));
  if (filter.q) where.push(`strpos(lower(name), lower($${params.push(filter.q)})) > 0`);
  const p = pageSql(page, 'id', params);
  const r = await db.query<ResellerRow>(`SELECT * FROM resellers WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`, params);
  return r.rows;
}

/** Updates when the version still matches; undefined when it changed meanwhile. */
export async function updateReseller(
  tx: Queryable,
  id: string,
  version: number,
  f: ResellerFields,
): Promise<ResellerRow | undefined> {
  const r = await tx.query<ResellerRow>(
    `UPDATE resellers SET name = $3, contact_email = $4, status = $5, max_accounts = $6, updated_at = now(), version = version + 1
     WHERE id = $1 AND version = $2 RETURNING *`,
    [id, version, f.name, f.contact_email, f.status, f.max_accounts],
  );
  return r.rows[0];
}

export const deleteReseller = (tx: Queryable, id: string) => tx.query('DELETE FROM resellers WHERE id = $1', [id]);

/** Locks the reseller row so concurrent account creations count its accounts one at a time. */
export async function lockResellerAccountCount(
  tx: Queryable,
  id: string,
): Promise<{ max_accounts: number | null; count: number } | undefined> {
  const r = await tx.query<{ max_accounts: number | null }>('SELECT max_accounts FROM resellers WHERE id = $1 FOR UPDATE', [id]);
  if (!r.rows[0]) return undefined;
  const c = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts WHERE reseller_id = $1', [id]);
  return { max_accounts: r.rows[0].max_accounts, count: c.rows[0]?.n ?? 0 };
}
