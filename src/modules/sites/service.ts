import { type Caller, requireKind, requireWritable } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { PageParams } from '../../db/paging.js';
import type { JobQueue } from '../../jobs/queue.js';
import { parseDomainName } from '../../lib/domain-name.js';
import { conflict, featureUnavailable, invalid, notFound, type FieldError } from '../../lib/errors.js';
import { isId, newId } from '../../lib/ids.js';
import { checkVersion, staleVersion, unlessConditional } from '../../lib/if-match.js';
import { mergeFields } from '../../lib/merge-patch.js';
import type { PhpDriver } from '../../provisioning/driver.js';
import { DEFAULT_PHP_SETTINGS, type PhpSettings } from '../../provisioning/render/php-fpm.js';
import { uncovered } from '../../tls/certificate.js';
import * as accounts from '../accounts/index.js';
import { hasFeature, lockBelowLimit, writableAccount, type AccountHooks } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { domainNamesOfAccount, type DomainDependent } from '../domains/index.js';
import * as ops from '../operations/index.js';
import { toOperation, type CancelHandler } from '../operations/index.js';
import type { PlanHooks } from '../plans/index.js';
import { requestIssue } from './certificates/issue.js';
import { deleteCertificate, requestCertificate } from './certificates/repo.js';
import { SSL_UNAVAILABLE } from './certificates/service.js';
import { findDeploymentById, setDeploymentStatus } from './deployments/repo.js';
import * as repo from './repo.js';
import { siteEvent, toSite } from './representation.js';
import type { CreateSite, Site, SitePatch, TlsSettings } from './schemas.js';
import { queueWebApply, touchWebUnitsOfAccount, touchWebUnitsOnPlan } from './unit.js';

/** What a site's row holds of what the API writes (its TLS settings beside the certificate's state). */
interface SiteFields {
  aliases: string[];
  runtime: string;
  php: PhpSettings;
  tls: TlsSettings;
}

/** The runtimes sites may choose: `static`, and PHP in the versions installed on the web host. */
export interface Runtimes {
  php: readonly string[];
}

/**
 * `static`, or `php-<version>` among those installed (else 422 naming them) on a plan with
 * the `php` feature (else 403).
 */
function checkRuntime(account: accounts.AccountRow, runtime: string, runtimes: Runtimes): string {
  if (runtime === 'static') return runtime;
  const version = /^php-(\d+\.\d+)$/.exec(runtime)?.[1];
  if (!version || !runtimes.php.includes(version)) {
    const installed = ['static', ...runtimes.php.map((v) => `php-${v}`)].join(', ');
    throw invalid([{ pointer: '/runtime', code: 'unknown_runtime', detail: `is not installed; installed: ${installed}` }]);
  }
  if (!hasFeature(account, 'php')) throw featureUnavailable('php', "The account's plan does not include PHP (`php`).");
  return runtime;
}

/**
 * The HTTPS a site asks for: `auto` by default when the plan includes `ssl` (Caddy's model:
 * HTTPS is the default, not an option to find), else `none`; turning `auto` or `custom` on
 * without `ssl`, or retrying a failed `auto` (`retry`), is a 403. A site that has HTTPS from
 * before its plan lost `ssl` keeps it through other changes, as a runtime uninstalled since
 * does. `custom` comes only with an uploaded certificate (PUT .../certificate).
 */
function checkTls(
  account: accounts.AccountRow,
  wanted: TlsSettings,
  currentMode: TlsSettings['mode'] | null,
  retry = false,
): TlsSettings {
  if (wanted.mode !== 'none' && (wanted.mode !== currentMode || retry) && !hasFeature(account, 'ssl')) throw SSL_UNAVAILABLE();
  if (wanted.mode === 'custom' && currentMode !== 'custom')
    throw invalid([
      {
        pointer: '/tls/mode',
        code: 'certificate_required',
        detail: 'upload the certificate with PUT /v1/sites/{site_id}/certificate: the mode becomes `custom` with it',
      },
    ]);
  return wanted;
}

/**
 * DELETE: the site turns `deleting` and a `site.delete` operation removes it; a repeated call
 * (or a domain deleted with cascade) shares the operation.
 */
async function beginSiteDeletion(tx: Queryable, jobs: JobQueue, site: repo.SiteRow) {
  if (site.status !== 'deleting') await repo.updateSite(tx, site.id, { status: 'deleting' });
  const started = await ops.startOperation(tx, {
    type: 'site.delete',
    resourceType: 'site',
    resourceId: site.id,
    accountId: site.account_id,
    resellerId: site.reseller_id,
  });
  if (started.created) await queueWebApply(tx, jobs, site.id);
  return started.row;
}

export function sitesService(deps: ServiceDeps, runtimes: Runtimes) {
  const { db, jobs } = deps;

  async function load(caller: Caller, id: string): Promise<repo.SiteRow> {
    const row = isId('site', id) ? await repo.findSite(db, caller, id) : undefined;
    if (!row) throw notFound('site');
    return row;
  }

  /**
   * The hostname and aliases: valid names (A-labels), each a domain of the account or a name
   * under one, no repeats. Uniqueness across the service is the database's (409).
   */
  async function hostnames(accountId: string, hostname: string, aliases: string[]): Promise<string[]> {
    const owned = await domainNamesOfAccount(db, accountId);
    const errors: FieldError[] = [];
    const names: string[] = [];
    [hostname, ...aliases].forEach((raw, i) => {
      const pointer = i === 0 ? '/hostname' : `/aliases/${i - 1}`;
      // An alias may be a wildcard (`*.example.com`: every name one label below); its certificate comes by DNS-01.
      const wildcard = i > 0 && raw.startsWith('*.');
      const parsed = parseDomainName(wildcard ? raw.slice(2) : raw);
      if (!parsed.ok) return errors.push({ pointer, code: parsed.problem, detail: parsed.detail });
      const base = parsed.ascii;
      const name = wildcard ? `*.${base}` : base;
      if (!owned.some((d) => base === d || base.endsWith(`.${d}`)))
        return errors.push({
          pointer,
          code: 'not_your_domain',
          detail: `${name} is not a domain of the account or a name under one`,
        });
      if (names.includes(name)) return errors.push({ pointer, code: 'duplicate', detail: `${name} is listed twice` });
      names.push(name);
    });
    if (errors.length) throw invalid(errors);
    return names;
  }

  const taken = (err: unknown) =>
    isUniqueViolation(err, 'site_hostnames_pkey') ? conflict('already_exists', 'A hostname already serves another site.') : err;

  async function setStatus(caller: Caller, id: string, to: 'active' | 'suspended', reason: string | null, event: string) {
    const current = await load(caller, id);
    requireKind(caller, ['operator', 'reseller'], `${to === 'active' ? 'unsuspend' : 'suspend'} sites`);
    requireWritable(caller);
    const from = to === 'active' ? 'suspended' : 'active';
    if (current.status === to) return toSite(current);
    if (current.status !== from) throw conflict('invalid_state', `The site is ${current.status}.`);
    const row = await db.transaction(async (tx) => {
      if (!(await repo.updateSite(tx, id, { status: to, suspension_reason: reason }, current.version))) throw staleVersion();
      await queueWebApply(tx, jobs, id);
      const updated = (await repo.findSiteById(tx, id)) as repo.SiteRow;
      await siteEvent(tx, event, updated);
      return updated;
    });
    return toSite(row);
  }

  /**
   * PUT and PATCH: aliases, runtime and `tls` (the hostname is fixed at creation). An automatic
   * certificate is asked for when the mode turns `auto`, when the names change, and when
   * `auto` is asked for again after a failure (a retry once the cause is fixed).
   */
  async function updateOnce(caller: Caller, id: string, patch: SitePatch, expectedVersion?: number): Promise<Site> {
    const current = await load(caller, id);
    const account = await writableAccount(db, caller, current.account_id);
    checkVersion(expectedVersion, current.version);
    if (current.status === 'deleting') throw conflict('invalid_state', 'The site is being deleted.');
    const before: SiteFields = {
      aliases: current.aliases,
      runtime: current.runtime,
      php: current.php,
      tls: { mode: current.tls_mode, redirect_http: current.tls_redirect_http, hsts: current.tls_hsts },
    };
    const next = mergeFields<SiteFields>(before, patch);
    const retry = patch.tls?.mode === 'auto' && current.tls_status === 'failed';
    const tls = checkTls(account, next.tls, current.tls_mode, retry);
    // A version uninstalled since does not stand in the way of other changes.
    if (next.runtime !== current.runtime) checkRuntime(account, next.runtime, runtimes);
    const names = await hostnames(current.account_id, current.hostname, next.aliases);
    const renamed = names.slice(1).join() !== current.aliases.join();
    try {
      const row = await db.transaction(async (tx) => {
        const change = {
          aliases: names.slice(1),
          runtime: next.runtime,
          php: next.php,
          tls_mode: tls.mode,
          tls_redirect_http: tls.redirect_http,
          tls_hsts: tls.hsts,
        };
        if (!(await repo.updateSite(tx, id, change, current.version))) throw staleVersion();
        await repo.setHostnames(tx, id, names);
        if (tls.mode === 'none') await deleteCertificate(tx, id);
        await queueWebApply(tx, jobs, id);
        let updated = (await repo.findSiteById(tx, id)) as repo.SiteRow;
        const served = ['active', 'suspended'].includes(updated.status);
        if (tls.mode === 'auto' && served && (current.tls_mode !== 'auto' || renamed || retry)) {
          const covered = updated.tls_status === 'active' && !uncovered(updated.tls_names ?? [], names).length;
          await requestIssue(tx, jobs, updated, covered);
          updated = (await repo.findSiteById(tx, id)) as repo.SiteRow;
        }
        await siteEvent(tx, 'site.updated', updated);
        return updated;
      });
      return toSite(row);
    } catch (err) {
      throw taken(err);
    }
  }

  return {
    load,
    async get(caller: Caller, id: string): Promise<Site> {
      return toSite(await load(caller, id));
    },

    async list(caller: Caller, filter: repo.SiteFilter, page: PageParams): Promise<Site[]> {
      return (await repo.listSites(db, caller, filter, page)).map(toSite);
    },

    /** 202: `provisioning`, with the `site.provision` operation that makes it `active` (or `failed`). */
    async create(caller: Caller, input: CreateSite) {
      const account = await writableAccount(db, caller, input.account_id);
      const names = await hostnames(account.id, input.hostname, input.aliases ?? []);
      const defaults: TlsSettings = { mode: hasFeature(account, 'ssl') ? 'auto' : 'none', redirect_http: false, hsts: false };
      const tls = checkTls(account, { ...defaults, ...input.tls }, null);
      const runtime = checkRuntime(account, input.runtime ?? 'static', runtimes);
      const id = newId('site');
      try {
        const { row, op } = await db.transaction(async (tx) => {
          const locked = await lockBelowLimit(tx, account.id, 'max_sites', repo.countSites);
          await repo.insertSite(tx, {
            id,
            account_id: account.id,
            hostname: names[0] as string,
            aliases: names.slice(1),
            runtime,
            php: { ...DEFAULT_PHP_SETTINGS, ...input.php },
            tls_mode: tls.mode,
            tls_redirect_http: tls.redirect_http,
            tls_hsts: tls.hsts,
          });
          await repo.setHostnames(tx, id, names);
          // `pending` from the start; the web apply asks for it once the site is served.
          if (tls.mode === 'auto') await requestCertificate(tx, id, false);
          const started = await ops.startOperation(tx, {
            type: 'site.provision',
            resourceType: 'site',
            resourceId: id,
            accountId: account.id,
            resellerId: locked.reseller_id,
          });
          await queueWebApply(tx, jobs, id);
          const created = (await repo.findSiteById(tx, id)) as repo.SiteRow;
          await siteEvent(tx, 'site.created', created);
          return { row: created, op: started.row };
        });
        return { ...toSite(row), operation: toOperation(op) };
      } catch (err) {
        throw taken(err);
      }
    },

    /** PUT and PATCH (updateOnce); without If-Match, a background write meanwhile is no conflict. */
    update: (caller: Caller, id: string, patch: SitePatch, expectedVersion?: number): Promise<Site> =>
      unlessConditional(expectedVersion, () => updateOnce(caller, id, patch, expectedVersion)),

    suspend: (caller: Caller, id: string, reason: string) => setStatus(caller, id, 'suspended', reason, 'site.suspended'),
    unsuspend: (caller: Caller, id: string) => setStatus(caller, id, 'active', null, 'site.active'),

    async remove(caller: Caller, id: string, expectedVersion?: number) {
      const current = await load(caller, id);
      requireWritable(caller, await accounts.findAccountById(db, current.account_id));
      checkVersion(expectedVersion, current.version);
      const { row, op } = await db.transaction(async (tx) => {
        const locked = await repo.findSiteById(tx, id, true);
        if (!locked) throw notFound('site');
        const started = await beginSiteDeletion(tx, jobs, locked);
        return { row: (await repo.findSiteById(tx, id)) as repo.SiteRow, op: started };
      });
      return { ...toSite(row), operation: toOperation(op) };
    },
  };
}
export type SitesService = ReturnType<typeof sitesService>;

/** Sites count against the account's usage and max_sites; what they sent this month is its bandwidth. */
const siteCounter: accounts.ResourceCounter = async (db, accountIds) => {
  const [sites, traffic] = await Promise.all([repo.siteCounts(db, accountIds), repo.trafficThisMonth(db, accountIds)]);
  return new Map(
    accountIds.map((id) => {
      const daily = traffic.get(id) ?? [];
      return [id, { sites: sites.get(id) ?? 0, bandwidth_bytes: daily.reduce((n, d) => n + d.bytes, 0), bandwidth_daily: daily }];
    }),
  );
};

const canceled = { code: 'canceled', title: 'Canceled', detail: 'The operation was canceled before it ran.' };

/** What canceling a queued site operation undoes. */
export const siteCancelHandlers = (jobs: JobQueue): [string, CancelHandler][] => [
  [
    'site.provision',
    {
      async undo(tx, op) {
        await repo.updateSite(tx, op.resource_id, { status: 'failed', error: canceled });
      },
    },
  ],
  [
    'site.delete',
    {
      async undo(tx, op) {
        const site = await repo.findSiteById(tx, op.resource_id, true);
        if (!site) return;
        await repo.updateSite(tx, site.id, { status: site.error ? 'failed' : site.suspension_reason ? 'suspended' : 'active' });
        await queueWebApply(tx, jobs, site.id);
      },
    },
  ],
  [
    'site.deploy',
    {
      // A rollback that is canceled leaves its release kept; a new release that never went live fails.
      async undo(tx, op) {
        const wasLive = Boolean((await findDeploymentById(tx, op.resource_id))?.live_at);
        await setDeploymentStatus(tx, op.resource_id, wasLive ? 'superseded' : 'failed', wasLive ? null : canceled);
      },
    },
  ],
];

/** Suspension re-renders the account's sites (503); termination withdraws each from the web server. */
export const siteAccountHooks = (
  jobs: JobQueue,
  db: Queryable,
  php: Pick<PhpDriver, 'removeAccount'>,
): Partial<AccountHooks> => ({
  counters: [siteCounter],
  // Its PHP pools and Unix user live outside its home.
  removals: [
    async (accountId) => {
      const account = await accounts.findAccountById(db, accountId);
      if (account) await php.removeAccount(account.username);
    },
  ],
  statusChanged: [(tx, accountId) => touchWebUnitsOfAccount(tx, jobs, accountId)],
  // The PHP pools' `pm.max_children` is the account's `php_workers`.
  limitsChanged: [
    async (tx, accountId, before, after) => {
      if (before.php_workers !== after.php_workers) await touchWebUnitsOfAccount(tx, jobs, accountId);
    },
  ],
  terminating: [
    async (tx, accountId) => {
      for (const site of await repo.siteIdsOfAccount(tx, accountId)) await queueWebApply(tx, jobs, site);
    },
  ],
});

/** Sites under a domain hold it; deleting the domain with cascade=true deletes them first. */
/** A plan's `php_workers` changed: its accounts' pools render again. */
export const sitePlanHooks = (jobs: JobQueue): PlanHooks => ({
  changed: [
    async (tx, planId, before, after) => {
      if (before.php_workers !== after.php_workers) await touchWebUnitsOnPlan(tx, jobs, planId);
    },
  ],
});

export const siteDomainHooks = (jobs: JobQueue): DomainDependent => {
  const live = async (tx: Queryable, domain: { account_id: string; name: string }) =>
    (await repo.sitesUnderDomain(tx, domain.account_id, domain.name)).filter((s) => s.status !== 'deleting');
  return {
    scope: 'sites:write',
    holders: async (tx, domain) => (await live(tx, domain)).map((s) => ({ type: 'site', id: s.id, hostname: s.hostname })),
    release: async (tx, domain) => {
      for (const site of await live(tx, domain)) await beginSiteDeletion(tx, jobs, site);
    },
  };
};
