import { type Caller, reachSql } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, pageOfIds, type PageParams } from '../../db/paging.js';
import type { Failure } from '../../http/schemas.js';
import { newId } from '../../lib/ids.js';
import type { OperationListQuery } from './schemas.js';

export type OperationStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';

export interface OperationRow {
  id: string;
  type: string;
  status: OperationStatus;
  progress: number;
  resource_type: string;
  resource_id: string;
  account_id: string | null;
  reseller_id: string | null;
  error: Failure | null;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/**
 * Starts an operation, or returns the unfinished one of the same type on the same resource
 * (the partial unique index makes a repeated request share it). `created` says which.
 */
export async function startOperation(
  tx: Queryable,
  op: { type: string; resourceType: string; resourceId: string; accountId: string | null; resellerId: string | null },
): Promise<{ row: OperationRow; created: boolean }> {
  const inserted = await tx.query<OperationRow>(
    `INSERT INTO operations (id, type, resource_type, resource_id, account_id, reseller_id) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (resource_id, type) WHERE status IN ('queued', 'running') DO NOTHING RETURNING *`,
    [newId('op'), op.type, op.resourceType, op.resourceId, op.accountId, op.resellerId],
  );
  if (inserted.rows[0]) return { row: inserted.rows[0], created: true };
  return { row: (await openOperation(tx, op.resourceId, op.type)) as OperationRow, created: false };
}

/** The unfinished operation of a type on a resource, if any (at most one, by the partial unique index). */
export async function openOperation(db: Queryable, resourceId: string, type: string): Promise<OperationRow | undefined> {
  const r = await db.query<OperationRow>(
    `SELECT * FROM operations WHERE resource_id = $1 AND type = $2 AND status IN ('queued', 'running')`,
    [resourceId, type],
  );
  return r.rows[0];
}

export async function findOperationById(db: Queryable, id: string): Promise<OperationRow | undefined> {
  return (await db.query<OperationRow>('SELECT * FROM operations WHERE id = $1', [id])).rows[0];
}

const reach = (caller: Caller, params: unknown[]) => reachSql(caller, { account: 'account_id', reseller: 'reseller_id' }, params);

export async function findOperation(db: Queryable, caller: Caller, id: string): Promise<OperationRow | undefined> {
  const params: unknown[] = [id];
  return (await db.query<OperationRow>(`SELECT * FROM operations WHERE id = $1 AND ${reach(caller, params)}`, params)).rows[0];
}

export async function listOperations(
  db: Queryable,
  caller: Caller,
  filter: Omit<OperationListQuery, 'limit' | 'cursor'>,
  page: PageParams,
): Promise<OperationRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params), ...equalityFilters(filter, ['status', 'type', 'resource_id', 'account_id'], '', params)];
  const p = pageOfIds('operations', 'o', where, page, params);
  return (await db.query<OperationRow>(`SELECT * FROM operations o WHERE ${p.where} ${p.tail}`, params)).rows;
}

/** Moves an operation on; `from` guards the transition so a canceled one is never revived. */
export async function transition(
  tx: Queryable,
  id: string,
  from: OperationStatus[],
  to: { status: OperationStatus; progress?: number; error?: unknown },
): Promise<OperationRow | undefined> {
  const r = await tx.query<OperationRow>(
    `UPDATE operations SET status = $3, progress = coalesce($4, progress), error = $5,
       started_at = CASE WHEN $3 = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
       finished_at = CASE WHEN $3 IN ('succeeded', 'failed', 'canceled') THEN now() ELSE finished_at END,
       updated_at = now(), version = version + 1
     WHERE id = $1 AND status = ANY($2::text[]) RETURNING *`,
    [id, from, to.status, to.progress ?? null, to.error === undefined ? null : JSON.stringify(to.error)],
  );
  return r.rows[0];
}
