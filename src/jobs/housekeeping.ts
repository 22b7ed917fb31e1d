import type { Clock } from '../lib/time.js';
import { JOBS } from './names.js';
import type { Worker } from './queue.js';

/** Once an hour, whichever process's turn it is (pg-boss runs a cron slot once). */
export const HOUSEKEEPING_CRON = '17 * * * *';

/** The housekeeping job: every module's pruning tasks (events, deliveries, idempotency keys, rate buckets). */
export const housekeepingWorker = (clock: Clock, tasks: ((now: Date) => Promise<unknown>)[]): Worker => ({
  queue: JOBS.housekeeping,
  run: async () => {
    const now = clock.now();
    for (const task of tasks) await task(now);
  },
});
