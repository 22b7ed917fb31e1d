import type { Db, Queryable } from '../../db/client.js';
import { periodic } from '../../jobs/periodic.js';
import type { Clock } from '../../lib/time.js';
import type { CronDriver } from '../../provisioning/driver.js';
import type { CronRunRecord } from '../../provisioning/render/cron.js';
import { publishResourceEvent } from '../publishing/index.js';
import * as repo from './repo.js';
import { toRun } from './representation.js';

/** The event a finished run raises, if any. */
const EVENT_OF: Partial<Record<CronRunRecord['status'], string>> = {
  failed: 'cron_job.run_failed',
  timed_out: 'cron_job.run_timed_out',
};

/**
 * Stores runs as their runner recorded them, each in its own transaction with the event of a run
 * that failed or timed out; true for each one stored (or already stored), which its server may forget.
 */
export async function storeRuns(db: Db, runs: CronRunRecord[]): Promise<string[]> {
  const done: string[] = [];
  for (const run of runs) {
    await db.transaction(async (tx) => {
      const finished = await repo.recordRun(tx, run);
      if (finished) await announce(tx, run);
      await repo.pruneRuns(tx, run.job_id);
    });
    if (run.status !== 'running') done.push(run.id);
  }
  return done;
}

async function announce(tx: Queryable, run: CronRunRecord): Promise<void> {
  const type = EVENT_OF[run.status];
  if (!type) return;
  const job = await repo.findJobById(tx, run.job_id);
  if (job) await publishResourceEvent(tx, type, 'cron_job', job, toRun(run));
}

/**
 * Each process collects the runs its server's runner recorded (every `intervalMs`, well within
 * the minute) and fails runs whose runner stopped reporting.
 */
export function runCollector(db: Db, clock: Clock, driver: CronDriver, intervalMs: number, onError: (err: unknown) => void) {
  return periodic(
    async () => {
      await driver.acknowledge(await storeRuns(db, await driver.collect()));
      for (const lost of await repo.failLostRuns(db, clock.now())) await db.transaction((tx) => announce(tx, lost));
    },
    intervalMs,
    onError,
  );
}
