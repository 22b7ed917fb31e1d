import path from 'node:path';
import { linkedCopy } from '../../archives/linked-copy.js';
import type { Listing } from '../../archives/listing.js';
import { systemCaller } from '../../auth/caller.js';
import {
  type BackupPart,
  type Copied,
  type MoveCopy,
  type PartServers,
  RestoreRefused,
  type StagedPart,
  type UnpackedUnder,
} from '../../contribution.js';
import { releaseDir, siteDir } from '../../layout.js';
import { exists } from '../../lib/disk.js';
import { findAccountById, transferLimit } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import { copyFromServer, LOCAL_SERVER_ID } from '../servers/index.js';
import { hasPendingDeployment } from './deployments/repo.js';
import type { DeploymentsService } from './deployments/service.js';
import * as repo from './repo.js';
import { toSite } from './representation.js';
import type { Site } from './schemas.js';
import { LANDS, sitesSentAhead, stagedAs } from './send-ahead.js';
import type { SitesService } from './service.js';

const ALL = { limit: 1_000_000, afterId: null };
/** How long a backup waits for the account's deployments still going live (then takes what is live). */
const DEPLOYMENT_WAIT_MS = 120_000;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for background work the restore started (a site's provisioning, its deployment). */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  // Looked at often, soonest first: a restore's deployment goes live within tens of milliseconds
  // and the restore waits on it (every 50 ms from the start, the wait added 25 ms on average).
  const start = Date.now();
  for (let wait = 5; Date.now() - start < timeoutMs; wait = Math.min(wait * 2, 50)) {
    const v = await probe();
    if (v !== undefined) return v;
    await pause(wait);
  }
  throw new RestoreRefused('restore_timeout', `${what} did not finish in time`);
}

/** What a backup's manifest holds of an account's sites. */
interface SitesManifest {
  sites?: Site[];
}

/**
 * Sites in backups: each site as the API shows it, and its live release's files
 * (`sites/<id>/`). A backup requested right after a deployment's 202 holds that deployment: it
 * waits until the account has no `pending` deployment (they switch live in milliseconds), at
 * most DEPLOYMENT_WAIT_MS. A site on another server is packed there by its agent, as it serves
 * it, once that server has applied the site's latest change (at most DEPLOYMENT_WAIT_MS too; a
 * release it has yet to switch to then fails the attempt, and the job tries again). A restore
 * re-creates a site that is gone and puts the files back as a new live release through a
 * deployment (quota checks, an atomic switch, rollback kept).
 */
export function sitesBackupPart(deps: ServiceDeps, sites: SitesService, deployments: DeploymentsService): BackupPart {
  const { db, config } = deps;
  const system = systemCaller('restore');
  const ahead = sitesSentAhead(deps);

  /**
   * A move's copy of a site's files goes live on the site's server as a new deployment (quota
   * checks, an atomic switch, rollback kept), moved into place as a restore's are. What is moved
   * is a copy of hard links: the staged copy stays for a retried step, and no byte is written
   * again. Its links are checked as an unpacked release's are (a copy from this machine's own
   * files was made without unpacking).
   */
  async function deployFiles(site: repo.SiteRow, files: string): Promise<void> {
    const release = `${files}.release`;
    await linkedCopy(files, release);
    await deployed(site, await deployments.deployDirectory(system, site.id, release));
  }

  /** Waits for a deployment made here to go live. */
  async function deployed(site: repo.SiteRow, deployment: { operation: { id: string } }): Promise<void> {
    const op = await until(`deploying ${site.hostname}`, async () => {
      const row = await ops.findOperationById(db, deployment.operation.id);
      return row && ['succeeded', 'failed', 'canceled'].includes(row.status) ? row : undefined;
    });
    if (op.status !== 'succeeded')
      throw new RestoreRefused('deployment_failed', `${site.hostname}: the release did not go live.`);
  }

  async function settledDeployments(accountId: string): Promise<void> {
    const deadline = Date.now() + DEPLOYMENT_WAIT_MS;
    while ((await hasPendingDeployment(db, accountId)) && Date.now() < deadline) await pause(100);
  }

  /**
   * A site on another server, as served there (with what it wrote into its release since): once
   * its server has applied its latest change (the live release among it), its agent packs the
   * release and streams it here, into the staging the backup archives. What arrives is bounded
   * by twice the account's disk quota: a server cannot fill the control plane's disk. A move's
   * first copy goes on to the site's new server as it arrives.
   */
  async function packedOnServer(
    serverId: string,
    s: repo.SiteRow,
    maxBytes: number,
    staging: string,
    copy?: MoveCopy,
  ): Promise<Listing | null> {
    const deadline = Date.now() + DEPLOYMENT_WAIT_MS;
    let site = await repo.findSiteById(db, s.id);
    while (site?.sync_state === 'pending' && Date.now() < deadline) {
      await pause(200);
      site = await repo.findSiteById(db, s.id);
    }
    if (!site?.current_deployment_id) return null;
    const task = { action: 'site.pack' as const, account_id: s.account_id, site_id: s.id, release: site.current_deployment_id };
    return copyFromServer(deps, serverId, task, path.join(staging, stagedAs(s.id)), {
      maxBytes,
      keep: copy && { listingFile: path.join(copy.listings, `site-${s.id}.json`), verify: copy.final },
      relay: copy && (await ahead.relayTo(site, copy)),
    });
  }

  return {
    name: 'sites',
    role: 'web',

    async stage(accountId: string, staging: string, from?: PartServers, copy?: MoveCopy): Promise<StagedPart> {
      await settledDeployments(accountId);
      const rows = await repo.listSites(db, systemCaller('backup'), { account_id: accountId }, ALL);
      const account = await findAccountById(db, accountId);
      const server = from?.web ?? account?.web_server_id ?? LOCAL_SERVER_ID;
      const maxBytes = transferLimit(account);
      const dirs = [];
      const copied: Copied = {};
      for (const s of rows) {
        if (!s.current_deployment_id) continue;
        if (server !== LOCAL_SERVER_ID) {
          const held = await packedOnServer(server, s, maxBytes, staging, copy);
          if (held) copied[stagedAs(s.id)] = held;
          continue;
        }
        const dir = releaseDir(siteDir(config.dataDir, s.account_id, s.id), s.current_deployment_id);
        if (await exists(dir)) dirs.push({ dir, as: stagedAs(s.id) });
      }
      return { manifest: { sites: rows.map(toSite) }, dirs, contents: { sites: rows.length }, copied };
    },

    async restore(accountId: string, manifest: SitesManifest, staging: string, unpacked: UnpackedUnder): Promise<void> {
      for (const s of manifest.sites ?? []) {
        const files = path.join(staging, stagedAs(s.id));
        if (!(await exists(files))) continue; // nothing was live
        let site = (await repo.findSiteById(db, s.id)) ?? (await repo.findSiteByHostname(db, s.hostname));
        if (site && site.account_id !== accountId)
          throw new RestoreRefused('already_exists', `${s.hostname} serves another account's site now.`);
        const id =
          site?.id ??
          (await sites.create(system, { account_id: accountId, hostname: s.hostname, aliases: s.aliases, runtime: s.runtime }))
            .id;
        site = await until(`provisioning ${s.hostname}`, async () => {
          const row = await repo.findSiteById(db, id);
          return row && row.status !== 'provisioning' ? row : undefined;
        });
        await deployed(site, await deployments.deployDirectory(system, site.id, files, unpacked(stagedAs(s.id))));
      }
    },

    async land(accountId: string, staging: string): Promise<void> {
      for (const site of await repo.listSites(db, system, { account_id: accountId }, ALL)) {
        const files = path.join(staging, stagedAs(site.id));
        if (!LANDS.includes(site.status)) continue;
        if (!(await ahead.landedAhead(site, staging)) && (await exists(files))) await deployFiles(site, files);
      }
    },

    sendAhead: ahead.sendAhead,
    cutOver: ahead.cutOver,
    discardAhead: ahead.discardAhead,
  };
}
