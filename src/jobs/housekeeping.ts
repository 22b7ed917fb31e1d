import type { Clock } from '../lib/time.js';
import { JOBS } from './names.js';
import type { Worker } from './queue.js';

/** Once an hour, whichever process's turn it is (pg-boss runs a cron slot once). */
export const HOUSEKEEPING_CRON = '17 * * * *';

/** The housekeeping job: every module's hourly tasks (pruning events, deliveries, idempotency keys, rate buckets; re-signing zones, asking parents for DS records). */
export const housekeepingWorker = (clock: Clock, tasks: ((now: Date) => Promise<unknown>)[]): Worker => ({
  queue: JOBS.housekeeping,
  run: async () => {
    const now = clock.now();
    for (const task of tasks) await task(now);
  },
});
