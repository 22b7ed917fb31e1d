import path from 'node:path';
import { accountHome } from '../accounts/usage.js';

/** A site's files live in its account's home (so they count in its disk usage). */
export const siteDir = (dataDir: string, accountId: string, siteId: string): string =>
  path.join(accountHome(dataDir, accountId), 'sites', path.basename(siteId));

export const releasesDir = (site: string) => path.join(site, 'releases');
export const releaseDir = (site: string, deploymentId: string) => path.join(site, 'releases', path.basename(deploymentId));
/** The document root: a symlink to the live release, swapped atomically. */
export const currentLink = (site: string) => path.join(site, 'current');
/**
 * Where an upload is received and unpacked before it becomes a release: outside the account's
 * home, so measuring the home's disk use can run meanwhile, and nothing half-done is ever in it.
 */
export const stagingDir = (dataDir: string, deploymentId: string) =>
  path.resolve(dataDir, 'staging', path.basename(deploymentId));
