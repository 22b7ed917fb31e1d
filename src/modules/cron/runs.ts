import type { Db, Queryable } from '../../db/client.js';
import { periodic } from '../../jobs/periodic.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { CronDriver } from '../../provisioning/driver.js';
import type { CronRunRecord } from '../../provisioning/render/cron.js';
import type { ServiceDeps } from '../deps.js';
import { publishResourceEvent } from '../publishing/index.js';
import { queueNotification } from './notify.js';
import * as repo from './repo.js';
import { toRun } from './representation.js';

/** The event a finished run raises, if any. */
const EVENT_OF: Partial<Record<CronRunRecord['status'], string>> = {
  failed: 'cron_job.run_failed',
  timed_out: 'cron_job.run_timed_out',
};

/**
 * Stores runs as their runner recorded them, each in its own transaction with what its end
 * raises; the ids of those finished and stored (or stored before), which their server may forget.
 */
export async function storeRuns(db: Db, jobs: JobQueue, runs: CronRunRecord[]): Promise<string[]> {
  const done: string[] = [];
  for (const run of runs) {
    await db.transaction(async (tx) => {
      if (await repo.recordRun(tx, run)) await finished(tx, jobs, run);
      await repo.pruneRuns(tx, run.job_id);
    });
    if (run.status !== 'running') done.push(run.id);
  }
  return done;
}

/** A run's end: its event when it failed or timed out, and its mail when its job asks for one. */
async function finished(tx: Queryable, jobs: JobQueue, run: CronRunRecord): Promise<void> {
  const job = await repo.findJobById(tx, run.job_id);
  if (!job) return;
  const type = EVENT_OF[run.status];
  if (type) await publishResourceEvent(tx, type, 'cron_job', job, toRun(run));
  await queueNotification(tx, jobs, job, run);
}

/**
 * Each process collects the runs its server's runner recorded (every `intervalMs`, well within
 * the minute) and fails runs whose runner stopped reporting.
 */
export function runCollector(
  { db, clock, jobs }: Pick<ServiceDeps, 'db' | 'clock' | 'jobs'>,
  driver: CronDriver,
  intervalMs: number,
  onError: (err: unknown) => void,
) {
  return periodic(
    async () => {
      await driver.acknowledge(await storeRuns(db, jobs, await driver.collect()));
      for (const lost of await repo.failLostRuns(db, clock.now())) await db.transaction((tx) => finished(tx, jobs, lost));
    },
    intervalMs,
    onError,
  );
}
