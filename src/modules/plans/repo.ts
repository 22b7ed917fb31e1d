import type { Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { pageSql, type PageParams } from '../../db/paging.js';
import { LIMIT_FIELDS, type Limits, type PlanFeature, type PlanListQuery, type SshAccess } from './schemas.js';

export interface PlanFields extends Limits {
  name: string;
  description: string;
  features: PlanFeature[];
  ssh_access: SshAccess;
}

export interface PlanRow extends PlanFields {
  id: string;
  reseller_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** Global plans (no reseller) are visible to all; a reseller's own to it and its accounts. */
function reach(caller: Caller, params: unknown[]): string {
  if (caller.principal.kind === 'operator') return 'TRUE';
  params.push(caller.resellerId);
  return `(reseller_id IS NULL OR reseller_id = $${params.length})`;
}

const FIELD_LIST = ['name', 'description', 'features', 'ssh_access', ...LIMIT_FIELDS] as const;
const values = (f: PlanFields) => FIELD_LIST.map((k) => f[k]);

export async function insertPlan(tx: Queryable, id: string, resellerId: string | null, f: PlanFields): Promise<PlanRow> {
  const cols = ['id', 'reseller_id', ...FIELD_LIST];
  const r = await tx.query<PlanRow>(
    `INSERT INTO plans (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *`,
    [id, resellerId, ...values(f)],
  );
  return r.rows[0] as PlanRow;
}

export async function findPlan(db: Queryable, caller: Caller, id: string): Promise<PlanRow | undefined> {
  const params: unknown[] = [id];
  const r = await db.query<PlanRow>(`SELECT * FROM plans WHERE id = $1 AND ${reach(caller, params)}`, params);
  return r.rows[0];
}

export async function listPlans(
  db: Queryable,
  caller: Caller,
  filter: Omit<PlanListQuery, 'limit' | 'cursor'>,
  page: PageParams,
): Promise<PlanRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params)];
  if (filter.name) where.push(`lower(name) = lower($${params.push(filter.name)})`);
  if (filter.q) where.push(`strpos(lower(name), lower($${params.push(filter.q)})) > 0`);
  const p = pageSql(page, 'id', params);
  const r = await db.query<PlanRow>(`SELECT * FROM plans WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`, params);
  return r.rows;
}

export async function updatePlan(tx: Queryable, id: string, version: number, f: PlanFields): Promise<PlanRow | undefined> {
  const sets = FIELD_LIST.map((k, i) => `${k} = $${i + 3}`).join(', ');
  const r = await tx.query<PlanRow>(
    `UPDATE plans SET ${sets}, updated_at = now(), version = version + 1 WHERE id = $1 AND version = $2 RETURNING *`,
    [id, version, ...values(f)],
  );
  return r.rows[0];
}

export const deletePlan = (tx: Queryable, id: string) => tx.query('DELETE FROM plans WHERE id = $1', [id]);
