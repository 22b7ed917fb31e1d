import { reachSql, type Caller } from '../../../auth/caller.js';
import type { BackupPartName } from '../../../contribution.js';
import type { Queryable } from '../../../db/client.js';
import { equalityFilters, pageOfIds, type PageParams } from '../../../db/paging.js';

export interface ScheduleRow {
  id: string;
  account_id: string;
  reseller_id: string | null;
  cron: string;
  timezone: string;
  include: BackupPartName[];
  retain: number;
  enabled: boolean;
  next_run_at: string | null;
  last_run_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const COLUMNS = `s.id, s.account_id, s.reseller_id, s.cron, s.timezone, s.include, s.retain, s.enabled, s.next_run_at, s.last_run_at,
  s.last_error, s.created_at, s.updated_at, s.version`;
const FROM = 'FROM backup_schedules s';
const reach = (caller: Caller, params: unknown[]) =>
  reachSql(caller, { account: 's.account_id', reseller: 's.reseller_id' }, params);

export type NewSchedule = Pick<ScheduleRow, 'id' | 'account_id' | 'cron' | 'timezone' | 'include' | 'retain' | 'enabled'> & {
  next_run_at: Date | null;
};

export async function insertSchedule(db: Queryable, s: NewSchedule): Promise<void> {
  await db.query(
    `INSERT INTO backup_schedules (id, account_id, cron, timezone, include, retain, enabled, next_run_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [s.id, s.account_id, s.cron, s.timezone, s.include, s.retain, s.enabled, s.next_run_at],
  );
}

export async function findSchedule(db: Queryable, caller: Caller, id: string): Promise<ScheduleRow | undefined> {
  const params: unknown[] = [id];
  return (await db.query<ScheduleRow>(`SELECT ${COLUMNS} ${FROM} WHERE s.id = $1 AND ${reach(caller, params)}`, params)).rows[0];
}

export async function findScheduleById(db: Queryable, id: string): Promise<ScheduleRow | undefined> {
  return (await db.query<ScheduleRow>(`SELECT ${COLUMNS} ${FROM} WHERE s.id = $1`, [id])).rows[0];
}

export async function listSchedules(db: Queryable, caller: Caller, f: { account_id?: string }, page: PageParams) {
  const params: unknown[] = [];
  const where = [reach(caller, params)];
  where.push(...equalityFilters(f, ['account_id'], 's.', params));
  const p = pageOfIds('backup_schedules', 's', where, page, params);
  return (await db.query<ScheduleRow>(`SELECT ${COLUMNS} ${FROM} WHERE ${p.where} ${p.tail}`, params)).rows;
}

export type ScheduleChange = Partial<Pick<ScheduleRow, 'cron' | 'timezone' | 'include' | 'retain' | 'enabled'>> & {
  next_run_at?: Date | null;
};

export async function updateSchedule(db: Queryable, id: string, version: number, change: ScheduleChange): Promise<boolean> {
  const params: unknown[] = [id, version];
  // An empty merge patch ({}) changes no field but is still a write: version and updated_at move.
  const sets = [...Object.entries(change).map(([col, value]) => `${col} = $${params.push(value)}`), 'updated_at = now()'];
  const r = await db.query(
    `UPDATE backup_schedules SET ${sets.join(', ')}, version = version + 1 WHERE id = $1 AND version = $2`,
    params,
  );
  return r.rowCount > 0;
}

export const deleteSchedule = (db: Queryable, id: string) => db.query('DELETE FROM backup_schedules WHERE id = $1', [id]);

/** Enabled schedules whose slot has come. */
export async function dueSchedules(db: Queryable, now: Date): Promise<ScheduleRow[]> {
  return (
    await db.query<ScheduleRow>(`SELECT ${COLUMNS} ${FROM} WHERE s.enabled AND s.next_run_at <= $1 ORDER BY s.next_run_at`, [now])
  ).rows;
}

/**
 * Claims a slot: moves next_run_at on only if it is still `slot`. Of several processes that
 * saw the same slot due, exactly one gets true.
 */
export async function claimSlot(tx: Queryable, id: string, slot: string, next: Date | null, ranAt: Date): Promise<boolean> {
  const r = await tx.query(
    `UPDATE backup_schedules SET next_run_at = $3, last_run_at = $4, last_error = NULL, updated_at = now(), version = version + 1
     WHERE id = $1 AND next_run_at = $2`,
    [id, slot, next, ranAt],
  );
  return r.rowCount > 0;
}

export const setLastError = (tx: Queryable, id: string, message: string) =>
  tx.query('UPDATE backup_schedules SET last_error = $2 WHERE id = $1', [id, message]);

/** The completed backups of one schedule beyond its newest `retain` (an index range, whatever the table's size). */
export async function beyondRetain(db: Queryable, scheduleId: string): Promise<{ id: string; storage_key: string }[]> {
  return (
    await db.query<{ id: string; storage_key: string }>(
      `SELECT b.id, b.storage_key FROM backup_schedules s CROSS JOIN LATERAL (
         SELECT id, storage_key FROM backups b WHERE b.schedule_id = s.id AND b.status = 'completed'
         ORDER BY b.completed_at DESC, b.id DESC OFFSET s.retain
       ) b WHERE s.id = $1`,
      [scheduleId],
    )
  ).rows;
}
