import { reachSql, type Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, pageOfIds, type PageParams } from '../../db/paging.js';
import { ofOneAccount, perAccount } from '../../db/per-account.js';
import { unitState } from '../../db/unit-state.js';
import type { Failure } from '../../http/schemas.js';
import type { PhpSettings } from '../../provisioning/render/php-fpm.js';
import type { SiteTraffic } from '../../provisioning/traffic-log.js';
import { measuredInto, SERVED_STATUS } from '../servers/index.js';
import type { SiteListQuery } from './schemas.js';

type SiteStatus = 'provisioning' | 'active' | 'suspended' | 'failed' | 'deleting';

export interface SiteRow {
  id: string;
  account_id: string;
  reseller_id: string | null;
  hostname: string;
  aliases: string[];
  /** `static` or `php-<major>.<minor>`. */
  runtime: string;
  php: PhpSettings;
  status: SiteStatus;
  suspension_reason: string | null;
  current_deployment_id: string | null;
  error: Failure | null;
  sync_state: 'pending' | 'in_sync' | 'error';
  sync_error: string | null;
  /** Bytes of the kept releases (measured when each was unpacked). */
  disk_bytes: number;
  tls_mode: 'auto' | 'custom' | 'none';
  tls_redirect_http: boolean;
  tls_hsts: boolean;
  /** The certificate's state (certificates), null without one. */
  tls_status: 'pending' | 'active' | 'failed' | null;
  tls_issuer: 'acme' | 'internal' | 'custom' | null;
  tls_names: string[] | null;
  tls_not_before: Date | null;
  tls_not_after: Date | null;
  tls_renew_after: Date | null;
  tls_error: Failure | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const SELECT = `SELECT s.id, s.account_id, s.reseller_id, s.hostname, s.aliases, s.runtime, s.php, s.status, s.suspension_reason,
    s.current_deployment_id, s.error, s.sync_state, s.sync_error, s.created_at, s.updated_at, s.version,
    (SELECT coalesce(sum(size_bytes), 0)::float8 FROM deployments p WHERE p.site_id = s.id AND p.status <> 'pruned')
      AS disk_bytes,
    s.tls_mode, s.tls_redirect_http, s.tls_hsts, c.status AS tls_status, c.issuer AS tls_issuer, c.names AS tls_names,
    c.not_before AS tls_not_before, c.not_after AS tls_not_after, c.renew_after AS tls_renew_after, c.error AS tls_error
  FROM sites s LEFT JOIN certificates c ON c.site_id = s.id`;

const reach = (caller: Caller, params: unknown[]) =>
  reachSql(caller, { account: 's.account_id', reseller: 's.reseller_id' }, params);

export async function findSite(db: Queryable, caller: Caller, id: string): Promise<SiteRow | undefined> {
  const params: unknown[] = [id];
  return (await db.query<SiteRow>(`${SELECT} WHERE s.id = $1 AND ${reach(caller, params)}`, params)).rows[0];
}

export async function findSiteById(db: Queryable, id: string, forUpdate = false): Promise<SiteRow | undefined> {
  return (await db.query<SiteRow>(`${SELECT} WHERE s.id = $1${forUpdate ? ' FOR UPDATE OF s' : ''}`, [id])).rows[0];
}

/** The list's filters. */
export type SiteFilter = Omit<SiteListQuery, 'limit' | 'cursor'>;

export async function listSites(db: Queryable, caller: Caller, f: SiteFilter, page: PageParams): Promise<SiteRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params)];
  where.push(...equalityFilters(f, ['account_id', 'status'], 's.', params));
  if (f.q) {
    const n = params.push(f.q);
    where.push(`EXISTS (SELECT 1 FROM site_hostnames h WHERE h.site_id = s.id AND strpos(h.hostname, lower($${n})) > 0)`);
  }
  const p = pageOfIds('sites', 's', where, page, params);
  return (await db.query<SiteRow>(`${SELECT} WHERE ${p.where} ${p.tail}`, params)).rows;
}

export async function insertSite(
  tx: Queryable,
  s: Pick<
    SiteRow,
    'id' | 'account_id' | 'hostname' | 'aliases' | 'runtime' | 'php' | 'tls_mode' | 'tls_redirect_http' | 'tls_hsts'
  >,
) {
  await tx.query(
    `INSERT INTO sites (id, account_id, hostname, aliases, runtime, php, tls_mode, tls_redirect_http, tls_hsts)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [s.id, s.account_id, s.hostname, s.aliases, s.runtime, JSON.stringify(s.php), s.tls_mode, s.tls_redirect_http, s.tls_hsts],
  );
}

/** The names a site answers to; the primary key makes each one unique across the service (23505 when taken). */
export async function setHostnames(tx: Queryable, siteId: string, names: string[]): Promise<void> {
  await tx.query('DELETE FROM site_hostnames WHERE site_id = $1', [siteId]);
  await tx.query('INSERT INTO site_hostnames (hostname, site_id) SELECT unnest($2::text[]), $1', [siteId, names]);
}

export type SiteChange = Partial<
  Pick<
    SiteRow,
    | 'aliases'
    | 'runtime'
    | 'php'
    | 'status'
    | 'suspension_reason'
    | 'current_deployment_id'
    | 'error'
    | 'tls_mode'
    | 'tls_redirect_http'
    | 'tls_hsts'
  >
>;

/**
 * Changes fields (none: the site's certificate changed) and marks the web unit changed; with
 * `version`, only if the row is still at it.
 */
export async function updateSite(tx: Queryable, id: string, f: SiteChange, version?: number): Promise<boolean> {
  const params: unknown[] = [id];
  const json = (k: string, v: unknown) => (k === 'error' || k === 'php') && v !== null;
  const sets = Object.entries(f).map(([k, v]) => `${k} = $${params.push(json(k, v) ? JSON.stringify(v) : v)}`);
  const guard = version === undefined ? '' : ` AND version = $${params.push(version)}`;
  const r = await tx.query(
    `UPDATE sites SET ${[...sets, ''].join(', ')}generation = generation + 1, sync_state = 'pending', updated_at = now(), version = version + 1
     WHERE id = $1${guard}`,
    params,
  );
  return r.rowCount === 1;
}

export const deleteSite = (tx: Queryable, id: string) => tx.query('DELETE FROM sites WHERE id = $1', [id]);

export const siteCounts = perAccount(
  'SELECT account_id, count(*)::int AS n FROM sites WHERE account_id = ANY($1::text[]) GROUP BY account_id',
);
export const countSites = ofOneAccount(siteCounts);

/** Sites of an account whose names are the domain or under it: they hold the domain. */
export async function sitesUnderDomain(db: Queryable, accountId: string, domain: string): Promise<SiteRow[]> {
  return (
    await db.query<SiteRow>(
      `${SELECT} WHERE s.account_id = $1 AND EXISTS (SELECT 1 FROM site_hostnames h WHERE h.site_id = s.id
         AND (h.hostname = $2 OR right(h.hostname, length($2) + 1) = '.' || $2)) ORDER BY s.id`,
      [accountId, domain],
    )
  ).rows;
}

/**
 * The PHP versions an account's sites use (those being deleted or failed aside), and whether
 * any of them other than `except` still waits for an apply (its server block may still name a
 * version the account no longer uses).
 */
/** The PHP versions an account's sites use, and which of its sites have yet to be applied. */
export async function phpVersionsOfAccount(db: Queryable, accountId: string) {
  const r = await db.query<{ runtime: string; pending: boolean; id: string }>(
    `SELECT id, runtime, applied_generation < generation AS pending FROM sites
     WHERE account_id = $1 AND status NOT IN ('deleting', 'failed')`,
    [accountId],
  );
  const versions = [...new Set(r.rows.filter((s) => s.runtime.startsWith('php-')).map((s) => s.runtime.slice(4)))];
  return { versions, pending: r.rows.filter((s) => s.pending).map((s) => s.id) };
}

/** Another of the account's sites waits to be applied (its block may still name a pool): no pruning yet. */
export const othersPending = (account: { pending: string[] }, siteId: string) => account.pending.some((id) => id !== siteId);

export async function siteIdsOfAccount(db: Queryable, accountId: string): Promise<string[]> {
  return (await db.query<{ id: string }>('SELECT id FROM sites WHERE account_id = $1', [accountId])).rows.map((r) => r.id);
}

export type WebUnit = SiteRow & {
  account_status: string;
  account_username: string;
  /** The server whose web role the account is placed on. */
  web_server_id: string;
  generation: number;
  applied_generation: number;
};

/**
 * The web apply unit: the site, its account's status, and the generation it represents, as
 * committed: FOR SHARE waits for a change still being written (jobs/names.ts, UNIT_KEYS).
 * PostgreSQL locks a row's tables in the order `FOR SHARE OF` names them: the account before
 * its site, as writers take them (a suspension changes the account, then its sites). The other
 * order deadlocked with a suspension (test/api/unit-lock-order.test.ts).
 */
export async function loadWebUnit(db: Queryable, id: string): Promise<WebUnit | undefined> {
  const r = await db.query<WebUnit>(
    `SELECT x.*, ${SERVED_STATUS} AS account_status, a.username AS account_username, a.web_server_id, s.generation,
       s.applied_generation
     FROM (${SELECT} WHERE s.id = $1) x JOIN sites s ON s.id = x.id JOIN accounts a ON a.id = x.account_id
     FOR SHARE OF a, s`,
    [id],
  );
  return r.rows[0];
}

/**
 * The sites the agent of the server `$1` has yet to apply: changed since its last report, or being
 * provisioned or deleted (their rows settle when the agent reports).
 */
const PENDING_ON_SERVER = `FROM sites s JOIN accounts a ON a.id = s.account_id
  WHERE a.web_server_id = $1 AND s.status <> 'failed'
    AND (s.applied_generation < s.generation OR s.status IN ('provisioning', 'deleting'))`;

/** Whether a server's agent has sites to apply (an agent unit source's `waiting`). */
export const webUnitsWaitingOnServer = `EXISTS (SELECT 1 ${PENDING_ON_SERVER})`;

/** The sites a server's agent has yet to apply, as units: their ids in one query, the units in one more. */
export async function pendingWebUnitsOnServer(db: Queryable, serverId: string): Promise<WebUnit[]> {
  const pending = await db.query<{ id: string }>(`SELECT s.id ${PENDING_ON_SERVER}`, [serverId]);
  if (pending.rows.length === 0) return [];
  const r = await db.query<WebUnit>(
    `SELECT x.*, ${SERVED_STATUS} AS account_status, a.username AS account_username, a.web_server_id, s.generation,
       s.applied_generation
     FROM (${SELECT} WHERE s.id = ANY($1)) x JOIN sites s ON s.id = x.id JOIN accounts a ON a.id = x.account_id
     ORDER BY x.id`,
    [pending.rows.map((row) => row.id)],
  );
  return r.rows;
}

/** The web unit's state lives on the site's row. */
export const webUnits = unitState('sites', 'id');

export async function findSiteByHostname(db: Queryable, hostname: string): Promise<SiteRow | undefined> {
  const r = await db.query<{ site_id: string }>('SELECT site_id FROM site_hostnames WHERE hostname = $1', [hostname]);
  return r.rows[0] ? findSiteById(db, r.rows[0].site_id) : undefined;
}

/** Records each site's files as measured by the web server its account is placed on. */
export const recordMeasuredBytes = measuredInto({ table: 'sites', key: 'id', column: 'measured_bytes', role: 'web' });

/**
 * Records the bytes each site sent per day as the web server counted them: its totals, so the
 * same report twice changes nothing. A site that no longer exists is left out.
 */
export async function recordTraffic(db: Queryable, serverId: string, traffic: SiteTraffic[]): Promise<void> {
  if (traffic.length === 0) return;
  await db.query(
    `INSERT INTO web_traffic (account_id, site_id, server_id, day, bytes)
     SELECT s.account_id, s.id, $4, v.day, v.bytes FROM unnest($1::text[], $2::date[], $3::bigint[]) AS v(id, day, bytes)
     JOIN sites s ON s.id = v.id
     ON CONFLICT (account_id, site_id, server_id, day) DO UPDATE SET bytes = EXCLUDED.bytes
     WHERE web_traffic.bytes IS DISTINCT FROM EXCLUDED.bytes`,
    [traffic.map((t) => t.site_id), traffic.map((t) => t.day), traffic.map((t) => t.bytes), serverId],
  );
}

/** What each account's sites sent on each day of this calendar month (UTC) that had traffic, oldest first, by account. */
export async function trafficThisMonth(
  db: Queryable,
  accountIds: readonly string[],
): Promise<Map<string, { date: string; bytes: number }[]>> {
  const r = await db.query<{ account_id: string; date: string; bytes: number }>(
    `SELECT account_id, to_char(day, 'YYYY-MM-DD') AS date, sum(bytes)::float8 AS bytes FROM web_traffic
     WHERE account_id = ANY($1::text[]) AND day >= date_trunc('month', now() AT TIME ZONE 'UTC')::date
     GROUP BY account_id, day ORDER BY account_id, day`,
    [accountIds],
  );
  const days = new Map<string, { date: string; bytes: number }[]>();
  for (const { account_id, ...day } of r.rows) {
    const of = days.get(account_id);
    if (of) of.push(day);
    else days.set(account_id, [day]);
  }
  return days;
}

/**
 * What the account's sites wrote on the web servers that serve them: what each server measured
 * beyond the live release (uploads, caches). The releases themselves count from their records.
 */
export const writtenOnServers = perAccount(
  `SELECT s.account_id, coalesce(sum(greatest(s.measured_bytes - coalesce(p.size_bytes, 0), 0)), 0)::float8 AS n
   FROM sites s LEFT JOIN deployments p ON p.id = s.current_deployment_id
   WHERE s.account_id = ANY($1::text[]) AND s.measured_bytes IS NOT NULL GROUP BY s.account_id`,
);
