import type { Readable, Writable } from 'node:stream';
import type { CronAccountSpec, CronRunRecord } from './render/cron.js';
import type { MailDomainSpec } from './render/mail.js';
import type { DatabaseAccountSpec, DatabaseSpec, PartialLoad, TableChecksums } from './render/mariadb.js';
import type { SiteSpec } from './render/nginx.js';
import type { PhpPoolSpec } from './render/php-fpm.js';
import type { SshAccountSpec, SshLogin } from './render/ssh.js';
import type { Zone } from './render/zone-file.js';
import type { SiteTraffic } from './traffic-log.js';

/**
 * A DNS driver makes a zone served as given: the whole zone each time (applies are
 * idempotent; re-applying an unchanged zone is harmless). `embedded` renders files only;
 * real drivers (PowerDNS) implement the same interface.
 */
export interface DnsDriver {
  readonly name: string;
  applyZone(zone: Zone): Promise<void>;
  removeZone(name: string): Promise<void>;
}

/**
 * A mail driver makes one domain's mailboxes and forwarders real: login, delivery, quota,
 * aliases, autoresponders. `applyDomain` gets the whole unit (idempotent); `removeDomain`
 * withdraws a domain that is gone, and with `keepMaps` leaves its maps to a new domain of the
 * same name (only the old account's maildirs go).
 */
export interface MailDriver {
  readonly name: string;
  applyDomain(domain: MailDomainSpec): Promise<void>;
  removeDomain(name: string, root: string, options: { keepMaps: boolean }): Promise<void>;
  /**
   * The mail host's certificate (leaf then chain, PEM) and key for the submission service's
   * STARTTLS; nothing happens when it serves these already. True when it changed.
   */
  useCertificate(certificatePem: string, keyPem: string): Promise<boolean>;
}

/**
 * A web driver serves a site: its server block (hostnames, document root, suspension page).
 * `applySite` gets the whole unit (idempotent); `removeSite` stops serving it.
 */
export interface WebDriver {
  readonly name: string;
  applySite(site: SiteSpec): Promise<void>;
  removeSite(id: string): Promise<void>;
  /** Each site's bytes sent per day so far, from the server's access logs (absent: a driver that serves nothing). */
  collectTraffic?(): Promise<SiteTraffic[]>;
}

/**
 * A database driver makes an account's MariaDB databases, users and grants exactly what the
 * spec says: what carries the account's prefix and is not in the spec is dropped.
 * `applyAccount` returns the databases' sizes; `dump` and `load` serve backups and restores.
 */
export interface DatabaseDriver {
  readonly name: string;
  applyAccount(spec: DatabaseAccountSpec): Promise<Map<string, number>>;
  /** Drops every database and user carrying the prefix (a terminated account). */
  removeAccount(prefix: string): Promise<void>;
  /** The size in bytes (data and indexes) of every database on the server. */
  measure(): Promise<Map<string, number>>;
  /**
   * A consistent dump of one database written to `out` as it is made (an agent streams it to the
   * control plane meanwhile), and `out` ended once the dump succeeded, resolving when `out` has
   * finished: a failed one destroys `out` with its error, so that what was sent of it is never
   * taken for a whole dump. With `except`, a dump of the tables only (with their triggers), less
   * the tables and views it names: what a move's final copy sends of what changed.
   */
  dump(database: string, out: Writable, except?: readonly string[]): Promise<void>;
  /**
   * Drops and re-creates the database, then loads the dump read from `dump` as it arrives (an
   * agent reads it from the control plane meanwhile). A dump that fails as it is read (cut off)
   * fails the load: what was loaded of it stays until the next load, which drops it. With
   * `partial`, the database is kept (made if missing): the tables `drop` names are dropped and the
   * dump's tables replace their namesakes.
   */
  load(database: DatabaseSpec, dump: Readable, partial?: PartialLoad): Promise<void>;
  /**
   * Each table's checksum and definition (TableChecksums): a move compares its frozen source's
   * with its target's, before its final copy and once the dump is loaded there.
   */
  checksums(database: string): Promise<TableChecksums>;
}

/**
 * A PHP driver runs an account's PHP: one PHP-FPM pool per account and version as
 * the account's Unix user. Pools are added before a server block points at them and pruned
 * after none does, so switching a version never leaves a site without one.
 */
export interface PhpDriver {
  readonly name: string;
  /** The PHP versions installed on the web host (`8.2`), newest first. */
  readonly versions: readonly string[];
  /** Where the web server reaches the account's pool of a version. */
  socket(username: string, version: string): string;
  /**
   * The account's Unix user exists, with its home laid out as for its pools: what runs as the
   * account without a pool (its cron jobs) needs it too. Its name.
   */
  ensureUser(username: string, home: string): Promise<string>;
  /** The account's pools of these versions exist and answer (with its Unix user); others are left. */
  ensurePools(pools: PhpPoolSpec[]): Promise<void>;
  /** The account's pools of versions not in `keep` go. */
  prunePools(username: string, keep: readonly string[]): Promise<void>;
  /** Every pool of the account and its Unix user go (a terminated account). */
  removeAccount(username: string): Promise<void>;
  /** Gives the account's Unix user a release's files, readable by the web server's group. */
  own(dir: string, username: string): Promise<void>;
  /**
   * Ends the requests the account's pools are still running: a move's freeze, once the web server
   * hands them no more, so that no PHP begun before it writes after the final copy.
   */
  endRequests(username: string): Promise<void>;
}

/**
 * A cron driver makes an account's cron jobs run on schedule as its Unix user: `applyAccount`
 * gets the whole unit (idempotent), `removeAccount` withdraws it. Runs are recorded on the server
 * by Berth's runner; `collect` hands over what it recorded, `acknowledge` forgets the finished
 * ones once stored.
 */
export interface CronDriver {
  readonly name: string;
  applyAccount(spec: CronAccountSpec): Promise<void>;
  removeAccount(username: string): Promise<void>;
  /** Starts a run now, in the background; or why it cannot run here (the embedded default). */
  runNow(jobId: string, runId: string): Promise<{ skipped: string } | null>;
  collect(): Promise<CronRunRecord[]>;
  acknowledge(runIds: string[]): Promise<void>;
}

/**
 * An SSH driver gives an account's Unix user the SSH access its unit names (`applyAccount`, the
 * whole unit, idempotent) and takes it away when the account goes (`removeAccount`).
 */
export interface SshDriver {
  readonly name: string;
  applyAccount(spec: SshAccountSpec): Promise<void>;
  removeAccount(username: string): Promise<void>;
  /** The key logins sshd logged since the last call (none where its log is not read). */
  collectLogins(): Promise<SshLogin[]>;
}
