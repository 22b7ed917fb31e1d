import type { Queryable } from '../../db/client.js';
import type { Failure } from '../../http/schemas.js';
import type { JobQueue } from '../../jobs/queue.js';
import * as ops from '../operations/index.js';
import { requestIssue } from './certificates/issue.js';
import * as sites from './repo.js';
import { siteEvent } from './representation.js';
import { queueWebApply } from './unit.js';

/**
 * How a site's provisioning and deletion end, in the caller's transaction, whichever server
 * applied them: this process's web reconciler, or an agent whose report the listener records.
 */

/** The row, locked, if it is still in the state the apply read. */
async function lockIn(tx: Queryable, unit: sites.WebUnit): Promise<sites.SiteRow | undefined> {
  const locked = await sites.findSiteById(tx, unit.id, true);
  return locked?.status === unit.status ? locked : undefined;
}

/**
 * A provisioned site is `active` (or `failed` when its directories could not be made) and its
 * operation ends. The web server's failure (`syncError`) does not fail the site: it is served
 * once an apply succeeds. Its automatic certificate is requested then: HTTP-01 proofs go where
 * its server serves them (certificates/solver.ts).
 */
export async function settleProvision(
  tx: Queryable,
  jobs: JobQueue,
  unit: sites.WebUnit,
  outcome: { failure: Failure | null; syncError: string | null },
): Promise<void> {
  const { failure, syncError } = outcome;
  // Deleted meanwhile: the deletion's own apply takes it from here.
  if (!(await lockIn(tx, unit))) return;
  const op = await ops.openOperation(tx, unit.id, 'site.provision');
  await sites.updateSite(tx, unit.id, failure ? { status: 'failed', error: failure } : { status: 'active' });
  const row = (await sites.findSiteById(tx, unit.id)) as sites.SiteRow;
  if (!failure) {
    // Applied as it now stands, unless it changed while the block was being written.
    if (syncError !== null) await sites.webUnits.marks(tx, unit.id).failed(syncError);
    else if (row.version === unit.version + 1) await sites.webUnits.marks(tx, unit.id).applied(unit.generation + 1);
    else await queueWebApply(tx, jobs, unit.id);
  }
  await siteEvent(tx, failure ? 'site.failed' : 'site.active', row);
  if (!failure && row.tls_mode === 'auto') await requestIssue(tx, jobs, row);
  if (op)
    await ops.transition(tx, op.id, ['queued', 'running'], {
      status: failure ? 'failed' : 'succeeded',
      progress: 100,
      error: failure,
    });
}

/** A site no longer served and its files gone: the row goes (`site.deleted`), its operation succeeds. */
export async function settleRemoval(tx: Queryable, unit: sites.WebUnit): Promise<void> {
  const op = await ops.openOperation(tx, unit.id, 'site.delete');
  const locked = await lockIn(tx, unit);
  if (locked) {
    await siteEvent(tx, 'site.deleted', locked);
    await sites.deleteSite(tx, unit.id);
  }
  if (op) await ops.transition(tx, op.id, ['queued', 'running'], { status: 'succeeded', progress: 100, error: null });
}
