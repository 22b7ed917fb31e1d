import { mkdir, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { WebDriver } from '../../provisioning/driver.js';
import { siteSpec } from './reconciler.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import * as deployments from './deployments/repo.js';

import * as repo from './repo.js';
import { deploymentEvent, siteEvent } from './representation.js';
import { queueWebApply } from './unit.js';
import { messageOf } from '../../lib/errors.js';
import { currentLink, releaseDir, releasesDir, siteDir } from '../../layout.js';

/** Releases kept for rollback, the live one included. */
const KEEP_RELEASES = 5;

const problem = (err: unknown, code: string) => ({
  code,
  title: 'Provisioning failed',
  detail: messageOf(err),
});

/** Points `current` at a release atomically: a new symlink renamed over the old one. */
async function switchCurrent(dir: string, deploymentId: string): Promise<void> {
  const tmp = path.join(dir, `.current-${randomBytes(6).toString('hex')}`);
  await symlink(path.join('releases', path.basename(deploymentId)), tmp);
  try {
    await rename(tmp, currentLink(dir));
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * The site operations' jobs. Each is safe to run again after a crash: it re-reads the
 * operation and the rows, and every file step is idempotent.
 */
export function siteJobs(deps: ServiceDeps, driver: WebDriver) {
  const { db, config, jobs } = deps;

  async function begin(operationId: string): Promise<ops.OperationRow | undefined> {
    const op = await ops.findOperationById(db, operationId);
    if (!op || !['queued', 'running'].includes(op.status)) return undefined;
    await ops.transition(db, op.id, ['queued', 'running'], { status: 'running', progress: 10 });
    return op;
  }

  return {
    /**
     * Creates the site's directories and serves it: `active`, or `failed` with the problem when
     * its files cannot be made. A web server that is down does not fail the site: it is
     * `active` with `sync_state: error`, and the queued apply serves it once the server is back.
     */
    async provision(operationId: string): Promise<void> {
      const op = await begin(operationId);
      if (!op) return;
      const unit = await repo.loadWebUnit(db, op.resource_id);
      if (!unit || unit.status !== 'provisioning') {
        await ops.transition(db, op.id, ['running'], { status: 'succeeded', progress: 100 });
        return;
      }
      let failure: unknown = null;
      let syncError: string | null = null;
      try {
        await mkdir(releasesDir(siteDir(config.dataDir, unit.account_id, unit.id)), { recursive: true });
      } catch (err) {
        failure = err;
      }
      if (failure === null) {
        syncError = await driver.applySite(siteSpec({ ...unit, status: 'active' }, config.dataDir)).then(() => null, messageOf);
      }
      await db.transaction(async (tx) => {
        const error = failure === null ? null : problem(failure, 'provisioning_failed');
        await repo.updateSite(tx, unit.id, failure === null ? { status: 'active' } : { status: 'failed', error });
        if (failure === null) await queueWebApply(tx, jobs, unit.id);
        if (syncError !== null) await repo.markWebSyncError(tx, unit.id, syncError);
        await siteEvent(
          tx,
          failure === null ? 'site.active' : 'site.failed',
          (await repo.findSiteById(tx, unit.id)) as repo.SiteRow,
        );
        await ops.transition(tx, op.id, ['running'], { status: failure === null ? 'succeeded' : 'failed', progress: 100, error });
      });
    },

    /** Stops serving the site, removes its files, then the row (GET is 404 from here on). */
    async remove(operationId: string): Promise<void> {
      const op = await begin(operationId);
      if (!op) return;
      const site = await repo.findSiteById(db, op.resource_id);
      if (site) {
        await driver.removeSite(site.id);
        await ops.transition(db, op.id, ['running'], { status: 'running', progress: 50 });
        await rm(siteDir(config.dataDir, site.account_id, site.id), { recursive: true, force: true });
      }
      await db.transaction(async (tx) => {
        const locked = await repo.findSiteById(tx, op.resource_id, true);
        if (locked) {
          await siteEvent(tx, 'site.deleted', locked);
          await repo.deleteSite(tx, locked.id);
          // An apply that read the site before it was deleting may write its server block again
          // after the removal above; one more apply, which finds the site gone, removes it.
          await queueWebApply(tx, jobs, locked.id);
        }
        await ops.transition(tx, op.id, ['running'], { status: 'succeeded', progress: 100, error: null });
      });
    },

    /** Switches `current` to the release, records it live, and prunes releases beyond the kept ones. */
    async deploy(operationId: string): Promise<void> {
      const op = await begin(operationId);
      if (!op) return;
      const found = await db.query<{ site_id: string }>('SELECT site_id FROM deployments WHERE id = $1', [op.resource_id]);
      const site = found.rows[0] ? await repo.findSiteById(db, found.rows[0].site_id) : undefined;
      const dpl = site ? await deployments.findDeployment(db, site.id, op.resource_id) : undefined;
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
        await deployments.supersedeLive(tx, site.id, dpl.id);
        const live = (await deployments.setDeploymentStatus(tx, dpl.id, 'live')) as deployments.DeploymentRow;
        await repo.updateSite(tx, site.id, { current_deployment_id: dpl.id });
        await queueWebApply(tx, jobs, site.id);
        await deploymentEvent(tx, 'site.deployment.live', site, live);
        const old = await deployments.releasesToPrune(tx, site.id, KEEP_RELEASES);
        for (const id of old) await deployments.setDeploymentStatus(tx, id, 'pruned');
        await ops.transition(tx, op.id, ['running'], { status: 'succeeded', progress: 100, error: null });
        return old;
      });
      for (const id of pruned) await rm(releaseDir(dir, id), { recursive: true, force: true });
    },
  };
}
