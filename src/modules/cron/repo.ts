import { reachSql, type Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { pageSql, type PageParams } from '../../db/paging.js';
import { ofOneAccount, perAccount } from '../../db/per-account.js';
import { type CronRunRecord, type CronCommand } from '../../provisioning/render/cron.js';

/** Runs kept per job: the newest. */
const RUNS_KEPT = 100;

export interface JobFields {
  name: string;
  schedule: string;
  command: CronCommand;
  timeout_s: number;
  overlap: 'skip' | 'allow';
  enabled: boolean;
  notify: { on: 'never' | 'failure' | 'always'; email?: string | null };
}

/** A job's fields alone, from its row or its representation. */
export const jobFields = (j: JobFields): JobFields => ({
  name: j.name,
  schedule: j.schedule,
  command: j.command,
  timeout_s: j.timeout_s,
  overlap: j.overlap,
  enabled: j.enabled,
  notify: j.notify,
});

export interface JobRow extends JobFields {
  id: string;
  account_id: string;
  reseller_id: string | null;
  /** Where it runs: the account's web server. */
  web_server_id: string;
  sync_state: 'pending' | 'in_sync' | 'error';
  sync_error: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export type RunRow = CronRunRecord;

const COLUMNS = `j.id, j.account_id, a.reseller_id, a.web_server_id, j.name, j.schedule, j.command, j.timeout_s, j.overlap, j.enabled, j.notify,
  coalesce(u.sync_state, 'pending') AS sync_state, u.sync_error, j.created_at, j.updated_at, j.version`;
const FROM = `FROM cron_jobs j JOIN accounts a ON a.id = j.account_id LEFT JOIN cron_units u ON u.account_id = j.account_id`;
const reach = (caller: Caller, params: unknown[]) => reachSql(caller, { account: 'a.id', reseller: 'a.reseller_id' }, params);

export async function insertJob(tx: Queryable, id: string, accountId: string, f: JobFields): Promise<void> {
  await tx.query(
    `INSERT INTO cron_jobs (id, account_id, name, schedule, command, timeout_s, overlap, enabled, notify)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [id, accountId, f.name, f.schedule, JSON.stringify(f.command), f.timeout_s, f.overlap, f.enabled, JSON.stringify(f.notify)],
  );
}

/** A job of the account, in the caller's reach. */
export async function findJob(db: Queryable, caller: Caller, accountId: string, id: string): Promise<JobRow | undefined> {
  const params: unknown[] = [id, accountId];
  return (
    await db.query<JobRow>(`SELECT ${COLUMNS} ${FROM} WHERE j.id = $1 AND j.account_id = $2 AND ${reach(caller, params)}`, params)
  ).rows[0];
}

export async function findJobById(db: Queryable, id: string): Promise<JobRow | undefined> {
  return (await db.query<JobRow>(`SELECT ${COLUMNS} ${FROM} WHERE j.id = $1`, [id])).rows[0];
}

export async function listJobs(db: Queryable, accountId: string, page: PageParams): Promise<JobRow[]> {
  const params: unknown[] = [accountId];
  const p = pageSql(page, 'j.id', params);
  return (await db.query<JobRow>(`SELECT ${COLUMNS} ${FROM} WHERE j.account_id = $1 AND ${p.where} ${p.tail}`, params)).rows;
}

/** Every job of the account, oldest first (its cron unit). */
export async function jobsOfAccount(db: Queryable, accountId: string): Promise<JobRow[]> {
  return (await db.query<JobRow>(`SELECT ${COLUMNS} ${FROM} WHERE j.account_id = $1 ORDER BY j.id`, [accountId])).rows;
}

/** Of these jobs, those whose account's web server is `serverId`. */
export async function jobsOnServer(db: Queryable, serverId: string, jobIds: string[]): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT j.id FROM cron_jobs j JOIN accounts a ON a.id = j.account_id WHERE j.id = ANY($1::text[]) AND a.web_server_id = $2`,
    [jobIds, serverId],
  );
  return r.rows.map((row) => row.id);
}

export const jobCounts = perAccount(
  'SELECT account_id, count(*)::int AS n FROM cron_jobs WHERE account_id = ANY($1::text[]) GROUP BY account_id',
);
export const countJobs = ofOneAccount(jobCounts);

export async function updateJob(tx: Queryable, id: string, version: number, f: JobFields): Promise<boolean> {
  const r = await tx.query(
    `UPDATE cron_jobs SET name = $3, schedule = $4, command = $5, timeout_s = $6, overlap = $7, enabled = $8, notify = $9,
       updated_at = now(), version = version + 1
     WHERE id = $1 AND version = $2`,
    [id, version, f.name, f.schedule, JSON.stringify(f.command), f.timeout_s, f.overlap, f.enabled, JSON.stringify(f.notify)],
  );
  return r.rowCount > 0;
}

export const deleteJob = (tx: Queryable, id: string) => tx.query('DELETE FROM cron_jobs WHERE id = $1', [id]);

const RUN_COLUMNS = `r.id, r.job_id, r.trigger, r.status, r.started_at, r.finished_at, r.exit_code, r.output_tail, r.reason`;

export async function listRuns(db: Queryable, jobId: string, page: PageParams): Promise<RunRow[]> {
  const params: unknown[] = [jobId];
  const p = pageSql(page, 'r.id', params);
  return (await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM cron_runs r WHERE r.job_id = $1 AND ${p.where} ${p.tail}`, params))
    .rows;
}

export async function findRunById(db: Queryable, id: string): Promise<RunRow | undefined> {
  return (await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM cron_runs r WHERE r.id = $1`, [id])).rows[0];
}

/** The newest run of each job. */
export async function lastRuns(db: Queryable, jobIds: string[]): Promise<Map<string, RunRow>> {
  if (!jobIds.length) return new Map();
  const rows = (
    await db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM unnest($1::text[]) AS j(id)
       CROSS JOIN LATERAL (SELECT * FROM cron_runs r WHERE r.job_id = j.id ORDER BY r.id DESC LIMIT 1) r`,
      [jobIds],
    )
  ).rows;
  return new Map(rows.map((r) => [r.job_id, r]));
}

export async function insertRun(tx: Queryable, run: RunRow): Promise<void> {
  await tx.query(
    `INSERT INTO cron_runs (id, job_id, trigger, status, started_at, finished_at, exit_code, output_tail, reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [run.id, run.job_id, run.trigger, run.status, run.started_at, run.finished_at, run.exit_code, run.output_tail, run.reason],
  );
}

/**
 * Stores a run as its runner recorded it: a new one, or the end of one still `running` here.
 * What was already final stays (a record collected twice). True when the row changed to a final status.
 */
export async function recordRun(tx: Queryable, run: RunRow): Promise<boolean> {
  const r = await tx.query<{ status: string }>(
    `INSERT INTO cron_runs (id, job_id, trigger, status, started_at, finished_at, exit_code, output_tail, reason)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 WHERE EXISTS (SELECT 1 FROM cron_jobs WHERE id = $2)
     ON CONFLICT (id) DO UPDATE SET status = excluded.status, finished_at = excluded.finished_at,
       exit_code = excluded.exit_code, output_tail = excluded.output_tail, reason = excluded.reason
       WHERE cron_runs.status = 'running'
     RETURNING status`,
    [run.id, run.job_id, run.trigger, run.status, run.started_at, run.finished_at, run.exit_code, run.output_tail, run.reason],
  );
  return r.rows.length > 0 && r.rows[0]?.status !== 'running';
}

/** Runs beyond the newest RUNS_KEPT of a job go. */
export const pruneRuns = (tx: Queryable, jobId: string) =>
  tx.query(
    `DELETE FROM cron_runs WHERE job_id = $1 AND id < (
       SELECT id FROM cron_runs WHERE job_id = $1 ORDER BY id DESC OFFSET ${RUNS_KEPT - 1} LIMIT 1)`,
    [jobId],
  );

/**
 * Runs still `running` well past their timeout that no runner will report any more (the process
 * that started them died before the runner did): failed, with the reason.
 */
export async function failLostRuns(db: Queryable, now: Date): Promise<RunRow[]> {
  return (
    await db.query<RunRow>(
      `UPDATE cron_runs r SET status = 'failed', finished_at = $1, reason = 'the runner stopped reporting (the server restarted?)'
       FROM cron_jobs j WHERE j.id = r.job_id AND r.status = 'running'
         AND r.started_at < $1::timestamptz - make_interval(secs => j.timeout_s + 300)
       RETURNING ${RUN_COLUMNS}`,
      [now],
    )
  ).rows;
}
