import type { Queryable } from '../../db/client.js';
import { accountHome } from '../../layout.js';
import { directoryBytes } from '../../lib/disk.js';
import type { ExceededLimit } from '../../lib/errors.js';
import type { Limits } from '../plans/index.js';
import type { Usage } from './schemas.js';

/**
 * Counts an account's resources. Each resource module registers its counter here as it
 * lands; a kind without a module yet counts zero.
 */
export type ResourceCounter = (db: Queryable, accountId: string) => Promise<Partial<Omit<Usage, 'disk_bytes'>>>;

/** Bytes a module records for an account: under its home in `dir`, or (no `dir`) elsewhere (databases). */
export interface RecordedBytes {
  dir?: string;
  bytes: (db: Queryable, accountId: string) => Promise<number>;
}

const sum = async (parts: Promise<number>[]) => (await Promise.all(parts)).reduce((a, b) => a + b, 0);

/** Counts, and every byte of the account: its files walked, plus what is stored elsewhere. */
export async function measureUsage(
  db: Queryable,
  dataDir: string,
  accountId: string,
  counters: ResourceCounter[],
  elsewhere: RecordedBytes[],
): Promise<Usage> {
  const usage: Usage = {
    sites: 0,
    domains: 0,
    email_accounts: 0,
    databases: 0,
    database_users: 0,
    disk_bytes: 0,
    backups: 0,
    cron_jobs: 0,
    ssh_keys: 0,
    bandwidth_bytes: 0,
    bandwidth_daily: [],
  };
  for (const count of counters) Object.assign(usage, await count(db, accountId));
  usage.disk_bytes = await sum([
    directoryBytes(accountHome(dataDir, accountId)),
    ...elsewhere.map((r) => r.bytes(db, accountId)),
  ]);
  return usage;
}

/**
 * The account's disk use for a quota check, cheaper than walking everything: its files, with
 * the directories whose sizes a module records (site releases: a release never changes once
 * unpacked) counted from those records. Walking 10,000-file releases on every deployment cost
 * seconds.
 */
export const diskMeter =
  (db: Queryable, dataDir: string, recorded: RecordedBytes[]) =>
  async (accountId: string): Promise<number> =>
    sum([
      directoryBytes(
        accountHome(dataDir, accountId),
        recorded.flatMap((r) => r.dir ?? []),
      ),
      ...recorded.map((r) => r.bytes(db, accountId)),
    ]);

const MIB = 1024 * 1024;

/** Every limit the usage exceeds (all of them, so a downgrade is refused as a whole). */
export function exceededLimits(limits: Limits, usage: Usage): ExceededLimit[] {
  const checks: [string, number, number][] = [
    ['max_sites', limits.max_sites, usage.sites],
    ['max_domains', limits.max_domains, usage.domains],
    ['max_email_accounts', limits.max_email_accounts, usage.email_accounts],
    ['max_databases', limits.max_databases, usage.databases],
    ['max_database_users', limits.max_database_users, usage.database_users],
    ['max_backups', limits.max_backups, usage.backups],
    ['max_cron_jobs', limits.max_cron_jobs, usage.cron_jobs],
    ['max_ssh_keys', limits.max_ssh_keys, usage.ssh_keys],
    ['disk_quota_mb', limits.disk_quota_mb * MIB, usage.disk_bytes],
  ];
  return checks.filter(([, allowed, used]) => used > allowed).map(([limit, allowed, used]) => ({ limit, allowed, usage: used }));
}
