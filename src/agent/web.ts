import { mkdir, rename } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { unpackArchive } from '../archives/unpack.js';
import { accountHome, currentLink, releaseDir, releasesDir, siteDir } from '../layout.js';
import { exists } from '../lib/disk.js';
import { removeTree } from '../lib/remove-tree.js';
import type { AgentSiteSpec } from '../provisioning/agent-units.js';
import type { PhpDriver, WebDriver } from '../provisioning/driver.js';
import { liveRelease, pruneReleasesExcept, switchCurrent } from '../provisioning/releases.js';
import { stagedCopy } from './staged.js';

export interface SiteUnitDeps {
  dataDir: string;
  drivers: { web: WebDriver; php: PhpDriver };
  /** The release's files as the control plane packed them (a tar.gz). */
  fetchRelease: (spec: AgentSiteSpec, deploymentId: string) => Promise<Readable>;
}

/**
 * The live release is on this server and `current` points at it: fetched once into a partial
 * directory (or taken from the copy a move staged here under its name), given to the account's
 * user, then renamed into place (a crash leaves no half release), switched atomically; the
 * releases before it go (a rollback fetches again).
 */
async function syncRelease(o: SiteUnitDeps, spec: AgentSiteSpec, dir: string): Promise<void> {
  const release = spec.release;
  if (!release || (await liveRelease(dir)) === release) return;
  const target = releaseDir(dir, release);
  if (!(await exists(target))) {
    let files = stagedCopy(dir, release);
    if (!(await exists(files))) {
      files = path.join(releasesDir(dir), `.partial-${path.basename(release)}`);
      await removeTree(files);
      // The control plane checked the upload against the plan's limits; its own archive has no ratio.
      await unpackArchive({ stream: await o.fetchRelease(spec, release) }, 'tar.gz', files, {
        bytes: Number.MAX_SAFE_INTEGER,
        ratio: Number.POSITIVE_INFINITY,
      });
    }
    await o.drivers.php.own(files, spec.username);
    await rename(files, target);
  }
  await switchCurrent(dir, release);
  await pruneReleasesExcept(dir, release);
}

/**
 * A site on this web server, applied as the control plane's web reconciler applies a site of
 * its own server: the account's pools of every version its sites use exist before the server
 * block points at one, the live release is in place, the block is written, then pools no site
 * uses go. A removed site stops being served before its files go.
 */
export async function applySiteUnit(o: SiteUnitDeps, spec: AgentSiteSpec): Promise<void> {
  const { web, php } = o.drivers;
  const dir = siteDir(o.dataDir, spec.account_id, spec.site_id);
  if (spec.removed) {
    await web.removeSite(spec.site_id);
    if (spec.prune) await php.prunePools(spec.username, spec.php_versions);
    await removeTree(dir);
    return;
  }
  await mkdir(releasesDir(dir), { recursive: true });
  const home = accountHome(o.dataDir, spec.account_id);
  const versions = [...new Set([...spec.php_versions, ...(spec.php ? [spec.php.version] : [])])];
  if (versions.length)
    await php.ensurePools(
      versions.map((version) => ({
        username: spec.username,
        version,
        home,
        tmp: path.join(home, 'tmp'),
        workers: spec.php_workers,
      })),
    );
  await syncRelease(o, spec, dir);
  await web.applySite({
    id: spec.site_id,
    hostnames: spec.hostnames,
    root: currentLink(dir),
    suspended: spec.suspended,
    frozen: spec.frozen,
    php: spec.php ? { socket: php.socket(spec.username, spec.php.version), settings: spec.php.settings } : null,
    tls: spec.tls,
  });
  // Frozen: what PHP of the account still runs (a request begun before the freeze) ends now.
  if (spec.frozen) await php.endRequests(spec.username);
  if (spec.prune) await php.prunePools(spec.username, spec.php_versions);
}
