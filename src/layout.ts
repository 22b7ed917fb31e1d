import path from 'node:path';

/**
 * Where everything of an account lives on disk, in one place: its home (whose size is its disk
 * usage), its sites' releases and the live link, its maildirs, and the staging area outside it.
 */

/** Where an account's files live (site releases, maildirs); its size is the account's disk usage. */
export const accountHome = (dataDir: string, accountId: string): string => path.resolve(dataDir, 'accounts', accountId);

/**
 * Where the account's Unix user logs in and keeps its dotfiles (its passwd home, where its cron
 * jobs run): a directory of its own inside the account's files, whose root is root's (the SFTP
 * chroot OpenSSH demands) and only readable by the account's group.
 */
export const loginHome = (home: string): string => path.join(home, 'home');

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

/** Where a domain's mailboxes live, inside the account's home (so they count in its disk usage). */
export const mailRoot = (dataDir: string, accountId: string, domain: string): string =>
  path.join(accountHome(dataDir, accountId), 'mail', path.basename(domain));

/** What the web drivers render (server blocks, shared pages, certificates) lives under here. */
export const webRenderDir = (dataDir: string): string => path.resolve(dataDir, 'rendered', 'web');
/** Each site's access log (`<site>.log`), read for its traffic; root's, like the web server's own logs. */
export const webLogDir = (dataDir: string): string => path.resolve(dataDir, 'logs', 'web');
/** HTTP-01 proofs, served by every server block at `/.well-known/acme-challenge/`. */
export const acmeChallengeDir = (dataDir: string): string => path.join(webRenderDir(dataDir), 'acme-challenge');
