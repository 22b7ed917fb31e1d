import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { linkedCopy } from '../../archives/linked-copy.js';
import type { Listing } from '../../archives/listing.js';
import { systemCaller } from '../../auth/caller.js';
import type { Copied, MoveCopy } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { releaseDir, siteDir } from '../../layout.js';
import { exists } from '../../lib/disk.js';
import { newId } from '../../lib/ids.js';
import { removeTree } from '../../lib/remove-tree.js';
import { switchCurrent } from '../../provisioning/releases.js';
import type { ServiceDeps } from '../deps.js';
import { discardCopy, type RelayTo, sendCopy, sentAheadTo } from '../servers/index.js';
import { goLive } from './deployments/job.js';
import * as deployments from './deployments/repo.js';
import * as repo from './repo.js';

const ALL = { limit: 1_000_000, afterId: null };
/** The sites a move's copy goes live for (one being created or deleted keeps what it has). */
export const LANDS: repo.SiteRow['status'][] = ['active', 'suspended'];

/** What a site's copy goes live as on its new server at the cutover: written once the final copy is there. */
interface Landing {
  release: string;
  files: number;
  bytes: number;
}

/** Where a site's files are in a backup's or a move's staging, and their name in its archive. */
export const stagedAs = (siteId: string) => `sites/${siteId}`;

const landingFile = (staging: string, siteId: string) => path.join(staging, `${stagedAs(siteId)}.landing.json`);
/** The release a site's copy is sent ahead as, chosen once per copy. */
const releaseFile = (listings: string, siteId: string) => path.join(listings, `site-${siteId}.release`);
/** What the target holds of a site's copy, as last sent. */
const sentFile = (listings: string, siteId: string) => path.join(listings, `site-${siteId}.sent.json`);

const readJson = async (file: string): Promise<unknown> => {
  const text = await readFile(file, 'utf8').catch(() => null);
  return text === null ? null : (JSON.parse(text) as unknown);
};

/**
 * A move's copy of its sites sent on to the web server the account moves to, so that the
 * cutover moves no bytes: while the source serves, whole, then only what changed (by the listing
 * of what was sent last time), each checked there against what was sent. Once the final copy is
 * there, the control plane keeps it as the release it goes live as (as hard links of the
 * staging: every release its agents fetch is kept here), and the cutover's transaction makes it
 * each site's live release: the target takes its staged copy in place of fetching it. A move to
 * this machine, or from a backup, lands as it did (`land`).
 */
export function sitesSentAhead(deps: ServiceDeps) {
  const { db, config } = deps;
  const system = systemCaller('move');
  const sitesOf = (accountId: string, q: Queryable = db) => repo.listSites(q, system, { account_id: accountId }, ALL);

  async function releaseOf(listings: string, siteId: string): Promise<string> {
    const file = releaseFile(listings, siteId);
    const kept = await readFile(file, 'utf8').catch(() => null);
    if (kept) return kept;
    const id = newId('dpl');
    await writeFile(file, id, { mode: 0o600 });
    return id;
  }

  async function send(server: string, site: repo.SiteRow, copy: MoveCopy, release: string, files: string, held?: Listing) {
    const task = { action: 'site.receive' as const, account_id: site.account_id, site_id: site.id, release };
    return { release, ...(await sendCopy(deps, server, task, files, sentFile(copy.listings, site.id), held)) };
  }

  return {
    /** Where a site's copy is relayed as it is fetched whole (copies.ts), if it goes on to another server. */
    async relayTo(site: repo.SiteRow, copy: MoveCopy): Promise<RelayTo | undefined> {
      const serverId = sentAheadTo(copy.to, 'web');
      if (!serverId) return undefined;
      const task = { action: 'site.receive' as const, account_id: site.account_id, site_id: site.id };
      return {
        serverId,
        task: { ...task, release: await releaseOf(copy.listings, site.id) },
        sentFile: sentFile(copy.listings, site.id),
      };
    },

    async sendAhead(accountId: string, staging: string, copy: MoveCopy, copied?: Copied): Promise<void> {
      const server = sentAheadTo(copy.to, 'web');
      if (!server) return;
      for (const site of await sitesOf(accountId)) {
        const files = path.join(staging, stagedAs(site.id));
        if (!(await exists(files))) continue;
        const release = await releaseOf(copy.listings, site.id);
        if (!copy.final) {
          await send(server, site, copy, release, files);
          continue;
        }
        // The release kept here is linked while the copy goes on: both only read the staging, and
        // the account is frozen until both are done.
        const kept = releaseDir(siteDir(config.dataDir, accountId, site.id), release);
        const sending = send(server, site, copy, release, files, copied?.[stagedAs(site.id)]);
        const [sent, linked] = await Promise.allSettled([sending, linkedCopy(files, kept)]);
        if (sent.status === 'rejected') throw sent.reason;
        if (linked.status === 'rejected') throw linked.reason;
        await writeFile(landingFile(staging, site.id), JSON.stringify(sent.value), { mode: 0o600 });
      }
    },

    async cutOver(tx: Queryable, accountId: string, staging: string): Promise<void> {
      for (const site of await sitesOf(accountId, tx)) {
        const landing = (await readJson(landingFile(staging, site.id))) as Landing | null;
        if (!landing || !LANDS.includes(site.status) || site.current_deployment_id === landing.release) continue;
        await deployments.insertDeployment(tx, {
          id: landing.release,
          site_id: site.id,
          format: 'tar.gz',
          archive_bytes: null,
          size_bytes: landing.bytes,
          file_count: landing.files,
        });
        await goLive(tx, deps.jobs, site, landing.release);
      }
    },

    /** Whether the site went live at the cutover as what was sent ahead: then the control plane's `current` follows. */
    async landedAhead(site: repo.SiteRow, staging: string): Promise<boolean> {
      const landing = (await readJson(landingFile(staging, site.id))) as Landing | null;
      if (!landing || site.current_deployment_id !== landing.release) return false;
      await switchCurrent(siteDir(config.dataDir, site.account_id, site.id), landing.release);
      return true;
    },

    async discardAhead(accountId: string, copy: MoveCopy): Promise<void> {
      const server = sentAheadTo(copy.to, 'web');
      if (!server) return;
      for (const site of await sitesOf(accountId)) {
        const release = await readFile(releaseFile(copy.listings, site.id), 'utf8').catch(() => null);
        if (!release) continue;
        await removeTree(releaseDir(siteDir(config.dataDir, accountId, site.id), release));
        await discardCopy(deps, server, { action: 'site.discard', account_id: accountId, site_id: site.id });
      }
    },
  };
}
