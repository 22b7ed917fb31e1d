import { nextRun, parseSchedule } from '../../lib/cron-schedule.js';
import type { CronRunRecord } from '../../provisioning/render/cron.js';
import type * as repo from './repo.js';
import type { CronJob, CronRun } from './schemas.js';

/** The time zone cron runs schedules in on this server (its system's). */
const SERVER_TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

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

export const toJob = (r: repo.JobRow, lastRun: CronRunRecord | undefined, now: Date): CronJob => ({
  id: r.id,
  account_id: r.account_id,
  name: r.name,
  schedule: r.schedule,
  timezone: SERVER_TIME_ZONE,
  command: r.command,
  timeout_s: r.timeout_s,
  overlap: r.overlap,
  enabled: r.enabled,
  notify: { on: r.notify.on, email: r.notify.email ?? null },
  next_run_at: r.enabled ? (nextRun(parseSchedule(r.schedule), now, SERVER_TIME_ZONE)?.toISOString() ?? null) : null,
  last_run: lastRun ? toRun(lastRun) : null,
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});
