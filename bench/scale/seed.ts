/**
 * Set-based seeding for the scale benchmark: `grow` adds accounts with their domains (each with
 * the SOA and two NS records a new domain gets, and its mail apply unit, applied), events and a
 * backup schedule with three completed backups, up to a target size, in a few INSERT … SELECT
 * statements. The accounts are placed on SCALE_SERVERS servers in turn (every role of one
 * account on the same server). Ids are
 * TypeID-shaped (`acc_0…` + the row number in hex, which Crockford base32 spells the same), so
 * the API takes them in paths and cursors. Growing again from a smaller size adds only the
 * difference: one database serves every step of the curve.
 */
import type { Queryable } from '../../src/db/client.js';

export interface ScaleSize {
  accounts: number;
  domainsPerAccount: number;
  eventsPerAccount: number;
  /**
   * How many of the oldest accounts are SCALE_RESELLER's: with 100, all of them at the smallest
   * step and 1 % of a million domains at the largest. Its pages are the hardest for a list read
   * newest first: every newer row belongs to someone else.
   */
  resellerAccounts: number;
}

/** Ten of the feed's own event types (one of them, `backup.completed`, is what the type filter asks for). */
const EVENT_TYPES = [
  'domain.created',
  'domain.updated',
  'dns.zone.changed',
  'dns.change.applied',
  'email.created',
  'email.updated',
  'site.created',
  'site.updated',
  'backup.completed',
  'account.updated',
];

/** A TypeID-shaped id for row n of a seeded table: n in hex after a leading 0. */
const idSql = (prefix: string, n: string) => `'${prefix}_0' || lpad(to_hex(${n}), 25, '0')`;
export const scaleId = (prefix: string, n: number) => `${prefix}_0${n.toString(16).padStart(25, '0')}`;

const SCALE_PLAN = scaleId('pln', 1);
/** The hosting servers the seeded accounts are placed on, in turn. */
const SCALE_SERVERS = 100;
const serverOf = (account: string) => idSql('srv', `1 + (${account}) % ${SCALE_SERVERS}`);
/** The reseller of the oldest accounts (ScaleSize.resellerAccounts). */
export const SCALE_RESELLER = scaleId('rsl', 1);

const seededAccounts = async (db: Queryable): Promise<number> =>
  (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts WHERE plan_id = $1', [SCALE_PLAN])).rows[0]?.n ?? 0;

/** Adds rows until `size` is reached; returns how many accounts there were before. */
export async function grow(db: Queryable, size: ScaleSize): Promise<number> {
  await db.query(
    `INSERT INTO plans (id, name, max_sites, max_domains, max_email_accounts, max_email_quota_mb, disk_quota_mb, max_backups, max_dns_records_per_domain)
     VALUES ($1, 'scale', 10, 1000, 10, 1024, 10240, 10, 1000) ON CONFLICT DO NOTHING`,
    [SCALE_PLAN],
  );
  await db.query(
    `INSERT INTO resellers (id, name, contact_email) VALUES ($1, 'Scale', 'scale@example.com') ON CONFLICT DO NOTHING`,
    [SCALE_RESELLER],
  );
  await db.query(
    `INSERT INTO servers (id, name, roles, ipv4, capacity_accounts, enrolled, last_seen_at)
     SELECT ${idSql('srv', 's')}, 'scale-' || s, ARRAY['web', 'mail', 'database'], '10.0.' || (s / 256) || '.' || (s % 256), 1000000, true, now()
     FROM generate_series(1, ${SCALE_SERVERS}) AS s ON CONFLICT DO NOTHING`,
  );
  const from = await seededAccounts(db);
  const to = size.accounts;
  if (to <= from) return from;
  const accounts = `generate_series(${from}, ${to - 1}) AS a`;
  await db.query(
    `INSERT INTO accounts (id, username, display_name, contact_email, plan_id, reseller_id, web_server_id, mail_server_id, database_server_id)
     SELECT ${idSql('acc', 'a')}, 'scale' || a, 'Scale ' || a, 'scale' || a || '@example.com', $1,
       CASE WHEN a < ${size.resellerAccounts} THEN $2 END, ${serverOf('a')}, ${serverOf('a')}, ${serverOf('a')}
     FROM ${accounts}`,
    [SCALE_PLAN, SCALE_RESELLER],
  );
  const perAccount = size.domainsPerAccount;
  const domains = `generate_series(${from * perAccount}, ${to * perAccount - 1}) AS d`;
  await db.query(
    `INSERT INTO domains (id, account_id, name, unicode_name, serial)
     SELECT ${idSql('dom', 'd')}, ${idSql('acc', `d / ${perAccount}`)}, 'd' || d || '.scale.test', 'd' || d || '.scale.test', 2026112400
     FROM ${domains}`,
  );
  await db.query(
    `INSERT INTO dns_records (id, domain_id, name, type, ttl, content, managed)
     SELECT ${idSql('rec', 'd * 3 + k')}, ${idSql('dom', 'd')}, '@', CASE k WHEN 0 THEN 'SOA' ELSE 'NS' END, 3600,
       CASE k WHEN 0 THEN 'ns1.scale.test. hostmaster.scale.test. 2026112400 3600 900 1209600 300' ELSE 'ns' || k || '.scale.test.' END, true
     FROM ${domains}, generate_series(0, 2) AS k`,
  );
  await db.query(
    `INSERT INTO mail_units (domain_id, generation, applied_generation, sync_state)
     SELECT ${idSql('dom', 'd')}, 2, 2, 'in_sync' FROM ${domains}`,
  );
  // Events of the new accounts interleaved (each account's are spread over the whole range, as
  // they are when many accounts change at once), of ten types.
  const newAccounts = to - from;
  const e0 = from * size.eventsPerAccount;
  const eventAccount = `${from} + (e - ${e0}) % ${newAccounts}`;
  await db.query(
    `INSERT INTO events (id, type, account_id, reseller_id, resource_type, resource_id, resource_version, data)
     SELECT ${idSql('evt', 'e')}, ($1::text[])[1 + (e / 13) % 10], ${idSql('acc', eventAccount)},
       CASE WHEN ${eventAccount} < ${size.resellerAccounts} THEN $2 END,
       'domain', ${idSql('dom', `(${eventAccount}) * ${perAccount}`)}, 1,
       jsonb_build_object('id', ${idSql('dom', 'e')}, 'name', 'd' || e || '.scale.test', 'status', 'active', 'mail_enabled', true)
     FROM generate_series(${e0}, ${to * size.eventsPerAccount - 1}) AS e`,
    [EVENT_TYPES, SCALE_RESELLER],
  );
  // One daily schedule per account, next due tomorrow, with three completed backups (retain 7).
  await db.query(
    `INSERT INTO backup_schedules (id, account_id, cron, timezone, include, retain, next_run_at)
     SELECT ${idSql('bks', 'a')}, ${idSql('acc', 'a')}, '0 3 * * *', 'UTC', ARRAY['sites', 'mail', 'dns'], 7, now() + interval '1 day'
     FROM ${accounts}`,
  );
  await db.query(
    `INSERT INTO backups (id, account_id, trigger, schedule_id, include, status, size_bytes, sha256, storage_key, completed_at)
     SELECT ${idSql('bak', 'a * 3 + k')}, ${idSql('acc', 'a')}, 'schedule', ${idSql('bks', 'a')}, ARRAY['sites', 'mail', 'dns'], 'completed',
       1024, repeat('0', 64), 'scale/' || a || '/' || k, now() - k * interval '1 day'
     FROM ${accounts}, generate_series(0, 2) AS k`,
  );
  return from;
}
