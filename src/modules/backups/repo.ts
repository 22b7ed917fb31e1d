import { reachSql, type Caller } from '../../auth/caller.js';
import type { BackupPartName } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, pageOfIds, type PageParams } from '../../db/paging.js';
import { perAccount } from '../../db/per-account.js';
import type { Failure } from '../../http/schemas.js';

export type BackupStatus = 'queued' | 'running' | 'completed' | 'failed' | 'expired';

export interface BackupRow {
  id: string;
  account_id: string;
  reseller_id: string | null;
  trigger: 'manual' | 'schedule';
  schedule_id: string | null;
  include: BackupPartName[];
  status: BackupStatus;
  size_bytes: number | null;
  sha256: string | null;
  contents: Record<string, number> | null;
  storage_key: string;
  attempt: number;
  error: Failure | null;
  started_at: string | null;
  completed_at: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const COLUMNS = `b.id, b.account_id, b.reseller_id, b.trigger, b.schedule_id, b.include, b.status, b.size_bytes::float8 AS size_bytes,
  b.sha256, b.contents, b.storage_key, b.attempt, b.error, b.started_at, b.completed_at, b.expires_at, b.created_at, b.updated_at, b.version`;
const FROM = 'FROM backups b';
const reach = (caller: Caller, params: unknown[]) =>
  reachSql(caller, { account: 'b.account_id', reseller: 'b.reseller_id' }, params);

/** Inserts a queued backup; undefined when one is already queued or running for the account. */
export async function insertBackup(
  tx: Queryable,
  b: Pick<BackupRow, 'id' | 'account_id' | 'trigger' | 'schedule_id' | 'include' | 'storage_key'>,
): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO backups (id, account_id, trigger, schedule_id, include, storage_key) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (account_id) WHERE status IN ('queued', 'running') DO NOTHING`,
    [b.id, b.account_id, b.trigger, b.schedule_id, b.include, b.storage_key],
  );
  return r.rowCount > 0;
}

export async function findBackup(db: Queryable, caller: Caller, id: string): Promise<BackupRow | undefined> {
  const params: unknown[] = [id];
  return (await db.query<BackupRow>(`SELECT ${COLUMNS} ${FROM} WHERE b.id = $1 AND ${reach(caller, params)}`, params)).rows[0];
}

export async function findBackupById(db: Queryable, id: string): Promise<BackupRow | undefined> {
  return (await db.query<BackupRow>(`SELECT ${COLUMNS} ${FROM} WHERE b.id = $1`, [id])).rows[0];
}

export async function listBackups(
  db: Queryable,
  caller: Caller,
  f: { account_id?: string; status?: string },
  page: PageParams,
): Promise<BackupRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params)];
  where.push(...equalityFilters(f, ['account_id', 'status'], 'b.', params));
  const p = pageOfIds('backups', 'b', where, page, params);
  return (await db.query<BackupRow>(`SELECT ${COLUMNS} ${FROM} WHERE ${p.where} ${p.tail}`, params)).rows;
}

/** Backups that count against `max_backups`: kept (completed) and in progress. */
export async function countRetained(db: Queryable, accountId: string): Promise<number> {
  const r = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM backups WHERE account_id = $1 AND status IN ('queued', 'running', 'completed')`,
    [accountId],
  );
  return r.rows[0]?.n ?? 0;
}

export type BackupChange = Partial<
  Pick<BackupRow, 'status' | 'size_bytes' | 'sha256' | 'contents' | 'error' | 'started_at' | 'completed_at' | 'expires_at'>
>;

/** A run of the backup job takes the backup: `running`, and its attempt number, or undefined. */
export async function beginRun(tx: Queryable, id: string, now: Date): Promise<number | undefined> {
  const r = await tx.query<{ attempt: number }>(
    `UPDATE backups SET status = 'running', attempt = attempt + 1, started_at = coalesce(started_at, $2),
       updated_at = now(), version = version + 1
     WHERE id = $1 AND status IN ('queued', 'running') RETURNING attempt`,
    [id, now],
  );
  return r.rows[0]?.attempt;
}

/**
 * Moves a backup on when it is in one of the `from` states (and, given `attempt`, still that
 * run's); false when it is not.
 */
export async function updateBackup(
  tx: Queryable,
  id: string,
  from: BackupStatus[],
  change: BackupChange,
  attempt?: number,
): Promise<boolean> {
  const params: unknown[] = [id, from];
  const sets = Object.entries(change).map(
    ([col, value]) => `${col} = $${params.push(col === 'contents' || col === 'error' ? JSON.stringify(value) : value)}`,
  );
  const r = await tx.query(
    `UPDATE backups SET ${sets.join(', ')}, updated_at = now(), version = version + 1
     WHERE id = $1 AND status = ANY($2::text[])${attempt === undefined ? '' : ` AND attempt = $${params.push(attempt)}`}`,
    params,
  );
  return r.rowCount > 0;
}

export const deleteBackup = (tx: Queryable, id: string) => tx.query('DELETE FROM backups WHERE id = $1', [id]);

export async function storageKeysOfAccount(db: Queryable, accountId: string): Promise<string[]> {
  return (await db.query<{ storage_key: string }>('SELECT storage_key FROM backups WHERE account_id = $1', [accountId])).rows.map(
    (r) => r.storage_key,
  );
}

/** `usage.backups`: the completed backups each account keeps. */
export const completedBackupCounts = perAccount(
  `SELECT account_id, count(*)::int AS n FROM backups WHERE account_id = ANY($1::text[]) AND status = 'completed' GROUP BY account_id`,
);
