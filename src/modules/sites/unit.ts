import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';

/** Queues the apply of a site's web unit, inside the transaction that changed it (and bumped its generation). */
export const queueWebApply = (tx: Queryable, jobs: JobQueue, siteId: string) => jobs.send(tx, JOBS.webApply, { site_id: siteId });

/**
 * Renders the sites `where` picks again (the sites `s`, their accounts `a`), each with an apply
 * queued in the transaction. The rows are locked in the order of their ids, whatever plan the
 * statement gets: a plan's change and an account's suspension that both reach the same sites
 * take them in one order, and neither waits for a row the other holds.
 */
async function touchWebUnits(tx: Queryable, jobs: JobQueue, where: string, params: unknown[]): Promise<void> {
  const ids = await tx.query<{ id: string }>(
    `WITH picked AS (
       SELECT s.id FROM sites s JOIN accounts a ON a.id = s.account_id WHERE ${where} ORDER BY s.id FOR UPDATE OF s)
     UPDATE sites s SET generation = s.generation + 1, sync_state = 'pending' FROM picked
     WHERE s.id = picked.id RETURNING s.id`,
    params,
  );
  for (const { id } of ids.rows) await queueWebApply(tx, jobs, id);
}

/** A suspended account's sites answer with the suspension page: their web units render again. */
export const touchWebUnitsOfAccount = (tx: Queryable, jobs: JobQueue, accountId: string) =>
  touchWebUnits(tx, jobs, 's.account_id = $1', [accountId]);

/** A plan's `php_workers` changed: the sites of its accounts without an override of their own render their pools again. */
export const touchWebUnitsOnPlan = (tx: Queryable, jobs: JobQueue, planId: string) =>
  touchWebUnits(tx, jobs, "a.plan_id = $1 AND NOT a.limit_overrides ? 'php_workers'", [planId]);
