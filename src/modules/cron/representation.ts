import type { Queryable } from '../../db/client.js';
import { nextRun, parseSchedule } from '../../lib/cron-schedule.js';
import type { CronRunRecord } from '../../provisioning/render/cron.js';
import { publishResourceEvent } from '../publishing/index.js';
import { findServerById, serverTimeZone } from '../servers/index.js';
import * as repo from './repo.js';
import type { CronJob, CronRun } from './schemas.js';

export const toRun = (r: CronRunRecord): CronRun => ({
  id: r.id,
  cron_job_id: r.job_id,
  trigger: r.trigger,
  status: r.status,
  started_at: r.started_at,
  finished_at: r.finished_at,
  exit_code: r.exit_code,
  output_tail: r.output_tail,
  reason: r.reason,
});

const toJob = (r: repo.JobRow, lastRun: CronRunRecord | undefined, now: Date, zone: string | null): CronJob => ({
  id: r.id,
  account_id: r.account_id,
  name: r.name,
  schedule: r.schedule,
  timezone: zone,
  command: r.command,
  timeout_s: r.timeout_s,
  overlap: r.overlap,
  enabled: r.enabled,
  notify: { on: r.notify.on, email: r.notify.email ?? null },
  next_run_at: r.enabled && zone ? (nextRun(parseSchedule(r.schedule), now, zone)?.toISOString() ?? null) : null,
  last_run: lastRun ? toRun(lastRun) : null,
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

/** Jobs as the API shows them: each with its last run and the time zone of the server it runs on. */
export async function presentJobs(db: Queryable, rows: repo.JobRow[], now: Date): Promise<CronJob[]> {
  const last = await repo.lastRuns(
    db,
    rows.map((r) => r.id),
  );
  const zones = new Map<string, string | null>();
  for (const id of new Set(rows.map((r) => r.web_server_id))) {
    const server = await findServerById(db, id);
    zones.set(id, server ? serverTimeZone(server) : null);
  }
  return rows.map((r) => toJob(r, last.get(r.id), now, zones.get(r.web_server_id) ?? null));
}

/** `cron_job.<action>` in the change's transaction, showing the job as it now is; the job shown. */
export async function jobEvent(tx: Queryable, action: 'created' | 'updated', id: string, now: Date): Promise<CronJob> {
  const row = (await repo.findJobById(tx, id)) as repo.JobRow;
  const shown = (await presentJobs(tx, [row], now))[0] as CronJob;
  await publishResourceEvent(tx, `cron_job.${action}`, 'cron_job', row, shown);
  return shown;
}
