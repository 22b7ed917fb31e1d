import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { listingTotals, listTree } from '../../../archives/listing.js';
import {
  ArchiveRefused,
  ArchiveTooLarge,
  UPLOAD_MAX_RATIO,
  unpackArchive,
  type ArchiveFormat,
  type Unpacked,
} from '../../../archives/unpack.js';
import { type Caller, isSystemCaller } from '../../../auth/caller.js';
import type { PageParams } from '../../../db/paging.js';
import { JOBS } from '../../../jobs/names.js';
import { releaseDir, siteDir, stagingDir } from '../../../layout.js';
import { conflict, invalid, notFound, payloadTooLarge, quotaExceeded } from '../../../lib/errors.js';
import { isId, newId } from '../../../lib/ids.js';
import { removeTree } from '../../../lib/remove-tree.js';
import type { PhpDriver } from '../../../provisioning/driver.js';
import { type AccountRow, limitsOf, notMoving, notMovingNow, writableAccount } from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import * as ops from '../../operations/index.js';
import { toOperation } from '../../operations/index.js';
import { LOCAL_SERVER_ID } from '../../servers/index.js';
import type * as sites from '../repo.js';
import type { SitesService } from '../service.js';
import * as repo from './repo.js';
import { toDeployment } from './representation.js';
import type { Deployment } from './schemas.js';

const MIB = 1024 * 1024;

class UploadTooLarge extends Error {}

/** The body, refused past `max` bytes; `received()` counts what came (the archive's size). */
function limited(body: Readable, max: number): { stream: Readable; received: () => number } {
  let seen = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(seen > max ? new UploadTooLarge() : null, chunk);
    },
  });
  body.on('error', (err) => limit.destroy(err));
  return { stream: body.pipe(limit), received: () => seen };
}

/** A zip needs random access: it is copied to a file first (never held in memory). */
async function receive(body: Readable, file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await pipeline(body, createWriteStream(file, { mode: 0o600 }));
}

/** Deployments: an archive unpacked into a new release while it is received, then switched live by a job. */
export function deploymentsService(deps: ServiceDeps, sitesSvc: SitesService, php: Pick<PhpDriver, 'own'>) {
  const { db, config, jobs } = deps;
  const maxBytes = config.deployMaxMb * MIB;

  /** The deployment (new, or a kept release) turns `pending` with the `site.deploy` operation that switches it live. */
  async function startSwitch(
    caller: Caller,
    site: sites.SiteRow,
    deploymentId: string,
    created?: Parameters<typeof repo.insertDeployment>[1],
  ) {
    return db.transaction(async (tx) => {
      // Checked again where it counts: a move that started meanwhile waits for this to commit, or
      // this sees it (Berth's own deployments during a move are the move's).
      if (!isSystemCaller(caller)) await notMovingNow(tx, site.account_id);
      if (created) await repo.insertDeployment(tx, created);
      const row = (await repo.setDeploymentStatus(tx, deploymentId, 'pending')) as repo.DeploymentRow;
      const started = await ops.startOperation(tx, {
        type: 'site.deploy',
        resourceType: 'deployment',
        resourceId: deploymentId,
        accountId: site.account_id,
        resellerId: site.reseller_id,
      });
      if (started.created) await jobs.send(tx, JOBS.siteDeploy, { operation_id: started.row.id });
      return { ...toDeployment(row), operation: toOperation(started.row) };
    });
  }

  /**
   * Files of a new release moved into place once they fit the account's disk quota with what it
   * uses. The account's Unix user owns them (its PHP may write them; others' may not read them);
   * on another web server its agent gives them its own copy, and this one is only kept.
   */
  async function keep(account: AccountRow, files: string, release: string, bytes: number, used: number): Promise<void> {
    if (used + bytes > limitsOf(account).disk_quota_mb * MIB) throw new ArchiveTooLarge(used + bytes);
    if (account.web_server_id === LOCAL_SERVER_ID) await php.own(files, account.username);
    await mkdir(path.dirname(release), { recursive: true });
    await rename(files, release);
  }

  async function deployableSite(caller: Caller, siteId: string) {
    const site = await sitesSvc.load(caller, siteId);
    const account = await writableAccount(db, caller, site.account_id);
    // Refused before the upload is received; checked again as the switch starts (startSwitch).
    if (!isSystemCaller(caller)) notMoving(account);
    if (site.status !== 'active' && site.status !== 'suspended') throw conflict('invalid_state', `The site is ${site.status}.`);
    return { site, account };
  }

  async function load(caller: Caller, siteId: string, id: string): Promise<{ site: sites.SiteRow; row: repo.DeploymentRow }> {
    const site = await sitesSvc.load(caller, siteId);
    const row = isId('dpl', id) ? await repo.findDeployment(db, site.id, id) : undefined;
    if (!row) throw notFound('deployment');
    return { site, row };
  }

  return {
    async list(caller: Caller, siteId: string, page: PageParams): Promise<Deployment[]> {
      const site = await sitesSvc.load(caller, siteId);
      return (await repo.listDeployments(db, site.id, page)).map(toDeployment);
    },

    async get(caller: Caller, siteId: string, id: string): Promise<Deployment> {
      return toDeployment((await load(caller, siteId, id)).row);
    },

    /**
     * Unpacks the archive into a new release as it is received; any refusal (a path or link
     * leading outside, a device file, too big for the limit or the remaining disk) answers now,
     * with nothing left behind. The switch live is the `site.deploy` operation.
     */
    async deploy(caller: Caller, siteId: string, body: Readable, format: ArchiveFormat, declaredLength: number | null) {
      const { site, account } = await deployableSite(caller, siteId);
      if (declaredLength !== null && declaredLength > maxBytes) throw tooLarge(maxBytes);
      const id = newId('dpl');
      const dir = siteDir(config.dataDir, site.account_id, site.id);
      const staging = stagingDir(config.dataDir, id);
      const quota = limitsOf(account).disk_quota_mb * MIB;
      let unpacked;
      let archiveBytes = () => 0;
      try {
        // The account's disk use is measured while the archive is received (the staging
        // directory is outside its home); the unpacking stops early at the whole quota.
        const used = deps.diskInUse(account.id);
        used.catch(() => undefined);
        const { stream: input, received } = limited(body, maxBytes);
        archiveBytes = received;
        // A tar.gz is unpacked as it arrives; a zip once it is on disk.
        if (format === 'zip') await receive(input, `${staging}.upload`);
        const source = format === 'zip' ? { file: `${staging}.upload` } : { stream: input };
        unpacked = await unpackArchive(source, format, staging, { bytes: quota, ratio: UPLOAD_MAX_RATIO });
        await keep(account, staging, releaseDir(dir, id), unpacked.bytes, await used);
      } catch (err) {
        await removeTree(staging);
        throw refusal(err, maxBytes, quota);
      } finally {
        await rm(`${staging}.upload`, { force: true });
      }
      const created = {
        id,
        site_id: site.id,
        format,
        archive_bytes: archiveBytes(),
        size_bytes: unpacked.bytes,
        file_count: unpacked.files,
      };
      return startSwitch(caller, site, id, created).catch(async (err: unknown) => {
        await removeTree(releaseDir(dir, id));
        throw err;
      });
    },

    /**
     * A directory of files already checked (a restore's, unpacked from Berth's own archive
     * whose checksum matched) made the site's new release: moved into place rather than packed
     * and unpacked again. It must be on the data directory's filesystem; it is gone afterwards.
     * Its files are listed for their count and size unless `counted` (the unpacking's own) says.
     */
    async deployDirectory(caller: Caller, siteId: string, files: string, counted?: Unpacked) {
      const { site, account } = await deployableSite(caller, siteId);
      const id = newId('dpl');
      const dir = siteDir(config.dataDir, site.account_id, site.id);
      const used = deps.diskInUse(account.id);
      used.catch(() => undefined);
      const { files: count, bytes } = counted ?? listingTotals(await listTree([{ dir: files, as: '' }]));
      try {
        await keep(account, files, releaseDir(dir, id), bytes, await used);
      } catch (err) {
        throw refusal(err, maxBytes, limitsOf(account).disk_quota_mb * MIB);
      }
      const created = {
        id,
        site_id: site.id,
        format: 'tar.gz' as const,
        archive_bytes: null,
        size_bytes: bytes,
        file_count: count,
      };
      return startSwitch(caller, site, id, created).catch(async (err: unknown) => {
        await removeTree(releaseDir(dir, id));
        throw err;
      });
    },

    /** Rollback: a kept release goes live again through the same operation as a deployment. */
    async activate(caller: Caller, siteId: string, id: string) {
      const { row } = await load(caller, siteId, id);
      const { site } = await deployableSite(caller, siteId);
      if (row.status !== 'superseded' && row.status !== 'live') {
        throw conflict('invalid_state', `The deployment is ${row.status}; only kept releases can be activated.`);
      }
      return startSwitch(caller, site, row.id);
    },
  };
}
export type DeploymentsService = ReturnType<typeof deploymentsService>;

const tooLarge = (max: number) => payloadTooLarge(`Archives may be at most ${max} bytes (BERTH_DEPLOY_MAX_MB).`, max);

function refusal(err: unknown, maxBytes: number, diskQuota: number): unknown {
  if (err instanceof UploadTooLarge) return tooLarge(maxBytes);
  if (err instanceof ArchiveTooLarge) {
    return quotaExceeded([{ limit: 'disk_quota_mb', allowed: diskQuota, usage: err.bytes }], err.message);
  }
  if (err instanceof ArchiveRefused) {
    // The body is the archive: the pointer is the whole body and the detail names the member.
    return invalid([{ pointer: '', code: err.code, detail: err.detail }], 'The archive was refused; nothing was kept.');
  }
  return err;
}
