import type { Queryable } from '../../db/client.js';
import { ofOneAccount, type PerAccount } from '../../db/per-account.js';
import { accountHome } from '../../layout.js';
import { directoryBytes } from '../../lib/disk.js';
import type { ExceededLimit } from '../../lib/errors.js';
import { inSlices } from '../../lib/slices.js';
import type { Limits } from '../plans/index.js';
import type { Usage } from './schemas.js';

/** Counts of an account's resources; a kind without a module yet counts zero. */
export type Counts = Partial<Omit<Usage, 'disk_bytes'>>;

/**
 * Counts of many accounts' resources, by account id (an account left out has none). Each
 * resource module registers its counter here as it lands.
 */
export type ResourceCounter = (db: Queryable, accountIds: readonly string[]) => Promise<Map<string, Counts>>;

/** A counter of one field from a figure per account. */
export const counterOf =
  (field: Exclude<keyof Counts, 'bandwidth_daily'>, figure: PerAccount): ResourceCounter =>
  async (db, accountIds) =>
    new Map([...(await figure(db, accountIds))].map(([id, n]) => [id, { [field]: n }]));

/** Bytes a module records for accounts: under each home in `dir`, or (no `dir`) elsewhere (databases). */
export interface RecordedBytes {
  dir?: string;
  bytes: PerAccount;
}

const sum = async (parts: Promise<number>[]) => (await Promise.all(parts)).reduce((a, b) => a + b, 0);

const noUsage = (): Usage => ({
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
});

/**
 * Counts, and every byte of these accounts: their files walked, plus what is stored elsewhere;
 * one statement per counter and record for all of them.
 */
export async function measureUsage(
  db: Queryable,
  dataDir: string,
  accountIds: readonly string[],
  counters: ResourceCounter[],
  elsewhere: RecordedBytes[],
): Promise<Map<string, Usage>> {
  const usages = new Map(accountIds.map((id) => [id, noUsage()]));
  for (const count of counters)
    for (const [id, counts] of await count(db, accountIds)) {
      const usage = usages.get(id);
      if (usage) Object.assign(usage, counts);
    }
  for (const r of elsewhere)
    for (const [id, bytes] of await r.bytes(db, accountIds)) {
      const usage = usages.get(id);
      if (usage) usage.disk_bytes += bytes;
    }
  await inSlices(
    [...usages],
    async ([id, usage]) => {
      usage.disk_bytes += await directoryBytes(accountHome(dataDir, id));
    },
    8,
  );
  return usages;
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
      ...recorded.map((r) => ofOneAccount(r.bytes)(db, accountId)),
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
