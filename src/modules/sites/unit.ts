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

/** A plan's `php_workers` changed: the sites of its accounts without an override of their own render their pools again. */
export async function touchWebUnitsOnPlan(tx: Queryable, jobs: JobQueue, planId: string): Promise<void> {
  const ids = await tx.query<{ id: string }>(
    `UPDATE sites s SET generation = s.generation + 1, sync_state = 'pending' FROM accounts a
     WHERE a.id = s.account_id AND a.plan_id = $1 AND NOT a.limit_overrides ? 'php_workers' RETURNING s.id`,
    [planId],
  );
  for (const { id } of ids.rows) await queueWebApply(tx, jobs, id);
}
