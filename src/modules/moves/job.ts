import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';

/**
 * Sends a move's job inside the caller's transaction: its start, a request it should act on now
 * (a cancel, a cutover, a forwarding over or to follow), or its next try (`startAfter`). The job
 * runs the steps not done yet, one run of a move at a time (runner.ts).
 */
export const sendMoveJob = (jobs: JobQueue, tx: Queryable, operationId: string, startAfter?: Date) =>
  jobs.send(tx, JOBS.accountMove, { operation_id: operationId }, startAfter && { startAfter });
