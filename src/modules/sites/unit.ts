import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';

/** Queues the apply of a site's web unit, inside the transaction that changed it (and bumped its generation). */
export const queueWebApply = (tx: Queryable, jobs: JobQueue, siteId: string) => jobs.send(tx, JOBS.webApply, { site_id: siteId });

/** A suspended account's sites answer with the suspension page: their web units render again. */
export async function touchWebUnitsOfAccount(tx: Queryable, jobs: JobQueue, accountId: string): Promise<void> {
  const ids = await tx.query<{ id: string }>(
    `UPDATE sites SET generation = generation + 1, sync_state = 'pending' WHERE account_id = $1 RETURNING id`,
    [accountId],
  );
  for (const { id } of ids.rows) await queueWebApply(tx, jobs, id);
}
