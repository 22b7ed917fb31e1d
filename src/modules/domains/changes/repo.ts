import type { Queryable } from '../../../db/client.js';
import { pageSql, type PageParams } from '../../../db/paging.js';
import type { ChangeRequest, DnsChange } from './schemas.js';

export type ChangeStatus = DnsChange['status'];

export interface ChangeRow {
  id: string;
  domain_id: string;
  status: ChangeStatus;
  apply_at: string | null;
  applied_at: string | null;
  request: ChangeRequest;
  result: DnsChange['result'];
  error: DnsChange['error'];
  created_at: string;
  updated_at: string;
  version: number;
}

export async function insertChange(
  tx: Queryable,
  c: Pick<ChangeRow, 'id' | 'domain_id' | 'status' | 'apply_at' | 'request' | 'result'>,
): Promise<ChangeRow> {
  const r = await tx.query<ChangeRow>(
    `INSERT INTO dns_changes (id, domain_id, status, apply_at, applied_at, request, result)
     VALUES ($1, $2, $3, $4, CASE WHEN $3 = 'applied' THEN now() END, $5, $6) RETURNING *`,
    [c.id, c.domain_id, c.status, c.apply_at, JSON.stringify(c.request), c.result === null ? null : JSON.stringify(c.result)],
  );
  return r.rows[0] as ChangeRow;
}

export async function findChange(db: Queryable, domainId: string, id: string): Promise<ChangeRow | undefined> {
  return (await db.query<ChangeRow>('SELECT * FROM dns_changes WHERE domain_id = $1 AND id = $2', [domainId, id])).rows[0];
}

export async function findChangeById(db: Queryable, id: string): Promise<ChangeRow | undefined> {
  return (await db.query<ChangeRow>('SELECT * FROM dns_changes WHERE id = $1', [id])).rows[0];
}

export async function listChanges(
  db: Queryable,
  domainId: string,
  status: string | undefined,
  page: PageParams,
): Promise<ChangeRow[]> {
  const params: unknown[] = [domainId];
  const where = ['domain_id = $1'];
  if (status) where.push(`status = $${params.push(status)}`);
  const p = pageSql(page, 'id', params);
  return (await db.query<ChangeRow>(`SELECT * FROM dns_changes WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`, params))
    .rows;
}

/** Moves a scheduled change on; undefined when it is no longer scheduled (canceled, already run). */
export async function finishScheduled(
  tx: Queryable,
  id: string,
  to: { status: Exclude<ChangeStatus, 'scheduled'>; result?: unknown; error?: unknown },
): Promise<ChangeRow | undefined> {
  const r = await tx.query<ChangeRow>(
    `UPDATE dns_changes SET status = $2, result = coalesce($3, result), error = $4,
       applied_at = CASE WHEN $2 = 'applied' THEN now() ELSE applied_at END, updated_at = now(), version = version + 1
     WHERE id = $1 AND status = 'scheduled' RETURNING *`,
    [
      id,
      to.status,
      to.result === undefined ? null : JSON.stringify(to.result),
      to.error === undefined ? null : JSON.stringify(to.error),
    ],
  );
  return r.rows[0];
}
