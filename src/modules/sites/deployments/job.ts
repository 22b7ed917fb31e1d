import type { Queryable } from '../../../db/client.js';
import type { JobQueue } from '../../../jobs/queue.js';
import { releaseDir, siteDir } from '../../../layout.js';
import { removeTree } from '../../../lib/remove-tree.js';
import { switchCurrent } from '../../../provisioning/releases.js';
import type { ServiceDeps } from '../../deps.js';
import * as ops from '../../operations/index.js';
import * as repo from '../repo.js';
import { problem } from '../representation.js';
import { queueWebApply } from '../unit.js';
import * as deployments from './repo.js';
import { deploymentEvent } from './representation.js';

/** Releases kept for rollback, the live one included. */
const KEEP_RELEASES = 5;

/** In `tx`: the release becomes the site's live one (the one live before it superseded), applied again where the site is served. */
export async function goLive(tx: Queryable, jobs: JobQueue, site: repo.SiteRow, id: string): Promise<void> {
  await deployments.supersedeLive(tx, site.id, id);
  const live = (await deployments.setDeploymentStatus(tx, id, 'live')) as deployments.DeploymentRow;
  await repo.updateSite(tx, site.id, { current_deployment_id: id });
  await queueWebApply(tx, jobs, site.id);
  await deploymentEvent(tx, 'site.deployment.live', site, live);
}

/**
 * The deployment operation's job: safe to run again after a crash, since it re-reads the
 * operation and the rows, and every file step is idempotent. (Creating and deleting a site are
 * the web apply's work: reconciler.ts.)
 */
export function deploymentJob(deps: ServiceDeps) {
  const { db, config, jobs } = deps;

  /** Switches `current` to the release, records it live, and prunes releases beyond the kept ones. */
  return async (operationId: string): Promise<void> => {
    const op = await ops.findOperationById(db, operationId);
    if (!op || !(await ops.transition(db, op.id, ['queued', 'running'], { status: 'running', progress: 10 }))) return;
    const dpl = await deployments.findDeploymentById(db, op.resource_id);
    const site = dpl ? await repo.findSiteById(db, dpl.site_id) : undefined;
    if (!site || !dpl || site.status === 'deleting') {
      await ops.transition(db, op.id, ['running'], {
        status: 'failed',
        progress: 100,
        error: problem('site gone', 'site_gone'),
      });
      return;
    }
    const dir = siteDir(config.dataDir, site.account_id, site.id);
    try {
      await switchCurrent(dir, dpl.id);
    } catch (err) {
      const error = problem(err, 'deployment_failed');
      await db.transaction(async (tx) => {
        const failed = (await deployments.setDeploymentStatus(tx, dpl.id, 'failed', error)) as deployments.DeploymentRow;
        await deploymentEvent(tx, 'site.deployment.failed', site, failed);
        await ops.transition(tx, op.id, ['running'], { status: 'failed', progress: 100, error });
      });
      return;
    }
    const pruned = await db.transaction(async (tx) => {
      await goLive(tx, jobs, site, dpl.id);
      const old = await deployments.releasesToPrune(tx, site.id, KEEP_RELEASES);
      for (const id of old) await deployments.setDeploymentStatus(tx, id, 'pruned');
      await ops.transition(tx, op.id, ['running'], { status: 'succeeded', progress: 100, error: null });
      return old;
    });
    for (const id of pruned) await removeTree(releaseDir(dir, id));
  };
}
