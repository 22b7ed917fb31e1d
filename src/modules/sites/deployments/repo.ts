import type { Queryable } from '../../../db/client.js';
import { pageSql, type PageParams } from '../../../db/paging.js';
import { perAccount } from '../../../db/per-account.js';
import type { Failure } from '../../../http/schemas.js';

export type DeploymentStatus = 'pending' | 'live' | 'failed' | 'superseded' | 'pruned';

export interface DeploymentRow {
  id: string;
  site_id: string;
  status: DeploymentStatus;
  format: 'tar.gz' | 'zip';
  size_bytes: number;
  archive_bytes: number | null;
  file_count: number;
  error: Failure | null;
  live_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const COLUMNS = `id, site_id, status, format, archive_bytes::float8 AS archive_bytes, size_bytes::float8 AS size_bytes, file_count, error, live_at, created_at, updated_at, version`;

export async function insertDeployment(
  tx: Queryable,
  d: Pick<DeploymentRow, 'id' | 'site_id' | 'format' | 'archive_bytes' | 'size_bytes' | 'file_count'>,
): Promise<DeploymentRow> {
  const r = await tx.query<DeploymentRow>(
    `INSERT INTO deployments (id, site_id, format, archive_bytes, size_bytes, file_count) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [d.id, d.site_id, d.format, d.archive_bytes, d.size_bytes, d.file_count],
  );
  return r.rows[0] as DeploymentRow;
}

export async function findDeployment(db: Queryable, siteId: string, id: string): Promise<DeploymentRow | undefined> {
  return (await db.query<DeploymentRow>(`SELECT ${COLUMNS} FROM deployments WHERE site_id = $1 AND id = $2`, [siteId, id]))
    .rows[0];
}

export async function findDeploymentById(db: Queryable, id: string): Promise<DeploymentRow | undefined> {
  return (await db.query<DeploymentRow>(`SELECT ${COLUMNS} FROM deployments WHERE id = $1`, [id])).rows[0];
}

export async function listDeployments(db: Queryable, siteId: string, page: PageParams): Promise<DeploymentRow[]> {
  const params: unknown[] = [siteId];
  const p = pageSql(page, 'id', params);
  return (await db.query<DeploymentRow>(`SELECT ${COLUMNS} FROM deployments WHERE site_id = $1 AND ${p.where} ${p.tail}`, params))
    .rows;
}

export async function setDeploymentStatus(
  tx: Queryable,
  id: string,
  status: DeploymentStatus,
  error: Failure | null = null,
): Promise<DeploymentRow | undefined> {
  const r = await tx.query<DeploymentRow>(
    `UPDATE deployments SET status = $2, error = $3, live_at = CASE WHEN $2 = 'live' THEN now() ELSE live_at END,
       updated_at = now(), version = version + 1
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, status, error === null ? null : JSON.stringify(error)],
  );
  return r.rows[0];
}

/** The release that was live becomes superseded when another goes live. */
export const supersedeLive = (tx: Queryable, siteId: string, except: string) =>
  tx.query(
    `UPDATE deployments SET status = 'superseded', updated_at = now(), version = version + 1
     WHERE site_id = $1 AND status = 'live' AND id <> $2`,
    [siteId, except],
  );

/** Kept releases beyond the newest `keep` (never the live one): their files go, the rows say `pruned`. */
export async function releasesToPrune(tx: Queryable, siteId: string, keep: number): Promise<string[]> {
  const r = await tx.query<{ id: string }>(
    `SELECT id FROM deployments WHERE site_id = $1 AND status = 'superseded'
     ORDER BY id DESC OFFSET $2`,
    [siteId, Math.max(0, keep - 1)],
  );
  return r.rows.map((x) => x.id);
}

/** Bytes of an account's kept releases, as measured when each was unpacked. */
export const keptReleaseBytes = perAccount(
  `SELECT s.account_id, coalesce(sum(p.size_bytes), 0)::float8 AS n FROM deployments p JOIN sites s ON s.id = p.site_id
   WHERE s.account_id = ANY($1::text[]) AND p.status <> 'pruned' GROUP BY s.account_id`,
);

/** Whether a deployment of the account's sites is still on its way live (`pending`). */
export async function hasPendingDeployment(db: Queryable, accountId: string): Promise<boolean> {
  const r = await db.query<{ id: string }>(
    `SELECT p.id FROM deployments p JOIN sites s ON s.id = p.site_id WHERE s.account_id = $1 AND p.status = 'pending' LIMIT 1`,
    [accountId],
  );
  return r.rows.length > 0;
}
