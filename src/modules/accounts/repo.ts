import { type Caller, reachSql } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, type PageParams, pageSql } from '../../db/paging.js';
import { LIMIT_FIELDS, type LimitField, type Limits, type SshAccess } from '../plans/index.js';
import type { Role } from '../servers/index.js';
import type { AccountFields, AccountListQuery, AccountStatus, Placement } from './schemas.js';

interface AccountTableRow {
  id: string;
  username: string;
  display_name: string;
  contact_email: string;
  plan_id: string;
  reseller_id: string | null;
  status: AccountStatus;
  suspension_reason: string | null;
  suspended_at: string | null;
  limit_overrides: Partial<Limits>;
  web_server_id: string;
  mail_server_id: string;
  database_server_id: string;
  /** The move that holds the account (accounts/moving.ts), and since when its servers serve it frozen. */
  move_id: string | null;
  frozen_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** An account row with its plan's limits joined in as `plan_<limit>` columns. */
export type AccountRow = AccountTableRow & { [K in LimitField as `plan_${K}`]: number } & {
  plan_features: string[];
  plan_ssh_access: SshAccess;
};

// The plan's limits come as plain columns (plan_max_sites, ...): cheaper to read than a json object.
const SELECT = `SELECT a.*, ${LIMIT_FIELDS.map((f) => `p.${f} AS plan_${f}`).join(', ')}, p.features AS plan_features, p.ssh_access AS plan_ssh_access
  FROM accounts a JOIN plans p ON p.id = a.plan_id`;

/**
 * The plan's limits, with `overrides` taking precedence. Written out rather than looped over
 * LIMIT_FIELDS: a list maps 50 rows a request, and a property named in code is read through an
 * inline cache where a key from a loop takes the generic keyed lookup (16 µs a page, a tenth of
 * the route's own cost). The `Limits` return type fails to compile when a limit is added and not named here.
 */
export function planLimitsOf(row: AccountRow, o: Partial<Limits> = {}): Limits {
  return {
    max_sites: o.max_sites ?? row.plan_max_sites,
    max_domains: o.max_domains ?? row.plan_max_domains,
    max_email_accounts: o.max_email_accounts ?? row.plan_max_email_accounts,
    max_email_quota_mb: o.max_email_quota_mb ?? row.plan_max_email_quota_mb,
    disk_quota_mb: o.disk_quota_mb ?? row.plan_disk_quota_mb,
    max_backups: o.max_backups ?? row.plan_max_backups,
    max_dns_records_per_domain: o.max_dns_records_per_domain ?? row.plan_max_dns_records_per_domain,
    max_databases: o.max_databases ?? row.plan_max_databases,
    max_database_users: o.max_database_users ?? row.plan_max_database_users,
    max_database_connections: o.max_database_connections ?? row.plan_max_database_connections,
    php_workers: o.php_workers ?? row.plan_php_workers,
    max_cron_jobs: o.max_cron_jobs ?? row.plan_max_cron_jobs,
    cron_min_interval_minutes: o.cron_min_interval_minutes ?? row.plan_cron_min_interval_minutes,
    max_ssh_keys: o.max_ssh_keys ?? row.plan_max_ssh_keys,
  };
}

const reach = (caller: Caller, params: unknown[]) => reachSql(caller, { account: 'a.id', reseller: 'a.reseller_id' }, params);

export async function insertAccount(
  tx: Queryable,
  a: { id: string; username: string; reseller_id: string | null; placement: Placement } & AccountFields,
): Promise<void> {
  await tx.query(
    `INSERT INTO accounts (id, username, display_name, contact_email, plan_id, reseller_id, limit_overrides,
       web_server_id, mail_server_id, database_server_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      a.id,
      a.username,
      a.display_name,
      a.contact_email,
      a.plan_id,
      a.reseller_id,
      JSON.stringify(a.limit_overrides),
      a.placement.web,
      a.placement.mail,
      a.placement.database,
    ],
  );
}

/** Accounts placed on each of `serverIds` for any role (a server's usage, and its capacity). */
export async function countAccountsOn(db: Queryable, serverIds: string[]): Promise<Map<string, number>> {
  const r = await db.query<{ server_id: string; n: number }>(
    `SELECT s.id AS server_id, count(a.id)::int AS n FROM unnest($1::text[]) AS s(id)
     LEFT JOIN accounts a ON s.id IN (a.web_server_id, a.mail_server_id, a.database_server_id)
     GROUP BY s.id`,
    [serverIds],
  );
  return new Map(r.rows.map((row) => [row.server_id, row.n]));
}

/**
 * Accounts placed on a server for at least one role, not being terminated nor (unless `moving`)
 * held by a move, with the roles they have there, in id order: what a drain moves next, whose
 * records a renumbered server repoints.
 */
export async function accountsPlacedOn(
  db: Queryable,
  serverId: string,
  limit: number,
  /** `after`: the page after that account's id. */
  o: { after?: string; moving?: boolean } = {},
): Promise<{ id: string; roles: Role[] }[]> {
  return (
    await db.query<{ id: string; roles: Role[] }>(
      `SELECT id, ARRAY_REMOVE(ARRAY[CASE WHEN web_server_id = $1 THEN 'web' END, CASE WHEN mail_server_id = $1 THEN 'mail' END,
           CASE WHEN database_server_id = $1 THEN 'database' END], NULL) AS roles
       FROM accounts WHERE $1 IN (web_server_id, mail_server_id, database_server_id) AND status <> 'terminating'
         AND id > $3 ${o.moving ? '' : 'AND move_id IS NULL'}
       ORDER BY id LIMIT $2`,
      [serverId, limit, o.after ?? ''],
    )
  ).rows;
}

export async function findAccount(db: Queryable, caller: Caller, id: string, forUpdate = false): Promise<AccountRow | undefined> {
  const params: unknown[] = [id];
  const lock = forUpdate ? ' FOR UPDATE OF a' : '';
  return (await db.query<AccountRow>(`${SELECT} WHERE a.id = $1 AND ${reach(caller, params)}${lock}`, params)).rows[0];
}

export async function findAccountById(db: Queryable, id: string, forUpdate = false): Promise<AccountRow | undefined> {
  return (await db.query<AccountRow>(`${SELECT} WHERE a.id = $1${forUpdate ? ' FOR UPDATE OF a' : ''}`, [id])).rows[0];
}

/** The list's filters. */
export type AccountFilter = Omit<AccountListQuery, 'limit' | 'cursor'>;

export async function listAccounts(db: Queryable, caller: Caller, f: AccountFilter, page: PageParams): Promise<AccountRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params)];
  where.push(...equalityFilters(f, ['status', 'reseller_id', 'plan_id', 'username'], 'a.', params));
  if (f.q) {
    const n = params.push(f.q);
    where.push(`(strpos(a.username, lower($${n})) > 0 OR strpos(lower(a.display_name), lower($${n})) > 0)`);
  }
  if (f.updated_since) where.push(`a.updated_at >= $${params.push(f.updated_since)}`);
  const p = pageSql(page, 'a.id', params);
  return (await db.query<AccountRow>(`${SELECT} WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`, params)).rows;
}

export async function updateAccount(tx: Queryable, id: string, version: number, f: AccountFields): Promise<boolean> {
  const r = await tx.query(
    `UPDATE accounts SET display_name = $3, contact_email = $4, plan_id = $5, limit_overrides = $6, updated_at = now(), version = version + 1
     WHERE id = $1 AND version = $2`,
    [id, version, f.display_name, f.contact_email, f.plan_id, JSON.stringify(f.limit_overrides)],
  );
  return r.rowCount === 1;
}

export async function setStatus(
  tx: Queryable,
  id: string,
  from: AccountStatus[],
  to: { status: AccountStatus; reason?: string | null; suspendedAt?: string | null },
): Promise<boolean> {
  const r = await tx.query(
    `UPDATE accounts SET status = $3, suspension_reason = $4, suspended_at = $5, updated_at = now(), version = version + 1
     WHERE id = $1 AND status = ANY($2::text[])`,
    [id, from, to.status, to.reason ?? null, to.suspendedAt ?? null],
  );
  return r.rowCount === 1;
}

export const deleteAccount = (tx: Queryable, id: string) => tx.query('DELETE FROM accounts WHERE id = $1', [id]);

/** Usage measured at `at`, by account; `updated_at` moves only for an account whose usage changed. */
export async function recordUsages(db: Queryable, usages: Map<string, unknown>, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO account_usage (account_id, usage, measured_at, updated_at)
     SELECT a.id, m.usage::jsonb, $3, $3 FROM unnest($1::text[], $2::text[]) AS m(id, usage) JOIN accounts a ON a.id = m.id
     ON CONFLICT (account_id) DO UPDATE SET usage = EXCLUDED.usage, measured_at = EXCLUDED.measured_at,
       updated_at = CASE WHEN account_usage.usage = EXCLUDED.usage THEN account_usage.updated_at ELSE EXCLUDED.updated_at END`,
    [[...usages.keys()], [...usages.values()].map((u) => JSON.stringify(u)), at.toISOString()],
  );
}

export interface UsageRow {
  id: string;
  username: string;
  reseller_id: string | null;
  usage: unknown;
  measured_at: string | null;
  updated_at: string | null;
}

/** A page of the reachable accounts with their last measured usage (none yet: nulls), by account id. */
export async function listUsage(
  db: Queryable,
  caller: Caller,
  f: { reseller_id?: string; updated_since?: string },
  page: PageParams,
): Promise<UsageRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params), ...equalityFilters(f, ['reseller_id'], 'a.', params)];
  if (f.updated_since) where.push(`u.updated_at >= $${params.push(f.updated_since)}`);
  const p = pageSql(page, 'a.id', params);
  const r = await db.query<UsageRow>(
    `SELECT a.id, a.username, a.reseller_id, u.usage, u.measured_at, u.updated_at
     FROM accounts a LEFT JOIN account_usage u ON u.account_id = a.id
     WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`,
    params,
  );
  return r.rows;
}

/** The accounts whose usage was not measured since `before` (another process may just have): the meter's work. */
export async function unmeasuredSince(db: Queryable, before: Date): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT a.id FROM accounts a LEFT JOIN account_usage u ON u.account_id = a.id
     WHERE u.measured_at IS NULL OR u.measured_at < $1 ORDER BY a.id`,
    [before.toISOString()],
  );
  return r.rows.map((row) => row.id);
}
