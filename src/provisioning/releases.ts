import { randomBytes } from 'node:crypto';
import { readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { currentLink, releasesDir } from '../layout.js';
import { removeTree } from '../lib/remove-tree.js';

/** A site's live release, the same way on every web server. */

const target = (deploymentId: string) => path.join('releases', path.basename(deploymentId));

/** Points `current` at a release atomically: a new symlink renamed over the old one. */
export async function switchCurrent(site: string, deploymentId: string): Promise<void> {
  const tmp = path.join(site, `.current-${randomBytes(6).toString('hex')}`);
  await symlink(target(deploymentId), tmp);
  try {
    await rename(tmp, currentLink(site));
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** The release `current` points at, if any. */
export const liveRelease = (site: string): Promise<string | null> =>
  readlink(currentLink(site)).then(
    (link) => path.basename(link),
    () => null,
  );

/** Every release of the site but `keep` goes (an agent keeps only the live one). */
export async function pruneReleasesExcept(site: string, keep: string | null): Promise<void> {
  const entries = await readdir(releasesDir(site)).catch(() => [] as string[]);
  for (const name of entries) if (name !== keep) await removeTree(path.join(releasesDir(site), name));
}
