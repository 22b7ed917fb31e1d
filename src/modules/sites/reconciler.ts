import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Queryable } from '../../db/client.js';
import { accountHome, currentLink, releasesDir, siteDir } from '../../layout.js';
import { publicMessage } from '../../lib/errors.js';
import { unseal } from '../../lib/sealed.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { PhpDriver, WebDriver } from '../../provisioning/driver.js';
import type { SiteSpec } from '../../provisioning/render/nginx.js';
import { findAccountById, limitsOf } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import { requestIssue } from './certificates/issue.js';
import { findCertificate } from './certificates/repo.js';
import * as sites from './repo.js';
import { problem, siteEvent } from './representation.js';
import { queueWebApply } from './unit.js';

/**
 * The `web.apply` job, the one place that brings the web server to a site's row, its lifecycle
 * included (creating and deleting a site only queue it):
 * - `provisioning`: makes the site's directories and serves it, then the site is `active` and
 *   its `site.provision` operation succeeds; directories that cannot be made fail both. A web
 *   server that is down does not fail the site: it is `active` with `sync_state: error`, and the
 *   queue's retries of this job serve it once the server is back.
 * - `deleting`: stops serving it, removes its files, then the row (`site.deleted`), and the
 *   `site.delete` operation succeeds; a deletion canceled while queued is left alone.
 * - `active`, `suspended`: renders the unit, skipping one already applied at its generation.
 * - `failed`, or gone: not served.
 * Every step can run again after a crash.
 */
export function webReconciler(deps: ServiceDeps, driver: WebDriver, php: PhpDriver, sealKey: Buffer) {
  const { db, config, jobs } = deps;
  const dirOf = (unit: sites.WebUnit) => siteDir(config.dataDir, unit.account_id, unit.id);
  type PhpOfAccount = Awaited<ReturnType<typeof sites.phpVersionsOfAccount>>;
  const phpVersion = (unit: sites.WebUnit) => (unit.runtime.startsWith('php-') ? unit.runtime.slice(4) : null);

  /**
   * Before a server block points at a pool, the account's pools of every version its sites use
   * exist (a switch of version never leaves a request without one).
   */
  async function ensurePools(unit: sites.WebUnit, versions: string[]): Promise<void> {
    const own = phpVersion(unit);
    const wanted = [...new Set([...versions, ...(own ? [own] : [])])];
    if (!wanted.length) return;
    const account = await findAccountById(db, unit.account_id);
    if (!account) return;
    const home = accountHome(config.dataDir, unit.account_id);
    const workers = limitsOf(account).php_workers;
    await php.ensurePools(
      wanted.map((version) => ({ username: unit.account_username, version, home, tmp: path.join(home, 'tmp'), workers })),
    );
  }

  /**
   * After the server block changed: pools of versions no site of the account uses go, unless
   * another of its sites has yet to be applied (its block may still name one); its apply prunes.
   */
  async function prunePools(unit: sites.WebUnit, account: PhpOfAccount): Promise<void> {
    const { versions, othersPending } = account;
    if (!othersPending) await php.prunePools(unit.account_username, versions);
  }

  /**
   * The unit as the web driver sees it; a suspended site or account gets the suspension page.
   * HTTPS is served with the site's certificate while its mode asks for one and it has one (a
   * renewal that failed keeps the old one served).
   */
  async function siteSpec(unit: sites.WebUnit): Promise<SiteSpec> {
    const cert = unit.tls_mode === 'none' ? undefined : await findCertificate(db, unit.id);
    return {
      id: unit.id,
      hostnames: [unit.hostname, ...unit.aliases],
      root: currentLink(dirOf(unit)),
      suspended: unit.status === 'suspended' || unit.account_status !== 'active',
      php: phpVersion(unit)
        ? { socket: php.socket(unit.account_username, phpVersion(unit) as string), settings: unit.php }
        : null,
      tls:
        cert?.certificate_pem && cert.private_key_sealed
          ? {
              fullchainPem: cert.certificate_pem + cert.chain_pem,
              privateKeyPem: unseal(cert.private_key_sealed, sealKey),
              redirectHttp: unit.tls_redirect_http,
              hsts: unit.tls_hsts,
            }
          : null,
    };
  }

  /** The row in a transaction, locked, if it is still in the state the job read. */
  const lockIn = async (tx: Queryable, unit: sites.WebUnit) => {
    const locked = await sites.findSiteById(tx, unit.id, true);
    return locked?.status === unit.status ? locked : undefined;
  };

  async function provision(unit: sites.WebUnit): Promise<void> {
    const op = await ops.openOperation(db, unit.id, 'site.provision');
    // Canceled while queued: the site is `failed` already and nothing was served.
    if (op && !(await ops.transition(db, op.id, ['queued', 'running'], { status: 'running', progress: 10 }))) return;
    const failure = await mkdir(releasesDir(dirOf(unit)), { recursive: true }).then(
      () => null,
      (err: unknown) => problem(err, 'provisioning_failed'),
    );
    const syncError = failure
      ? null
      : await sites
          .phpVersionsOfAccount(db, unit.account_id, unit.id)
          .then((account) => ensurePools(unit, account.versions))
          .then(() => siteSpec({ ...unit, status: 'active' }))
          .then((spec) => driver.applySite(spec))
          .then(() => null, publicMessage);
    await db.transaction(async (tx) => {
      // Deleted meanwhile: the deletion's own apply takes it from here.
      if (!(await lockIn(tx, unit))) return;
      await sites.updateSite(tx, unit.id, failure ? { status: 'failed', error: failure } : { status: 'active' });
      const row = (await sites.findSiteById(tx, unit.id)) as sites.SiteRow;
      if (!failure) {
        // Applied as it now stands, unless it changed while the block was being written.
        if (syncError !== null) await sites.webUnits.marks(tx, unit.id).failed(syncError);
        else if (row.version === unit.version + 1) await sites.webUnits.marks(tx, unit.id).applied(unit.generation + 1);
        else await queueWebApply(tx, jobs, unit.id);
      }
      await siteEvent(tx, failure ? 'site.failed' : 'site.active', row);
      // Served now: HTTP-01 can prove the names.
      if (!failure && row.tls_mode === 'auto') await requestIssue(tx, jobs, row);
      if (op)
        await ops.transition(tx, op.id, ['running'], { status: failure ? 'failed' : 'succeeded', progress: 100, error: failure });
    });
    // The queue retries the apply with backoff; the site is served once the server is back.
    if (syncError !== null) throw new Error(syncError);
  }

  async function remove(unit: sites.WebUnit): Promise<void> {
    const op = await ops.openOperation(db, unit.id, 'site.delete');
    if (!op || !(await ops.transition(db, op.id, ['queued', 'running'], { status: 'running', progress: 10 }))) return;
    await driver.removeSite(unit.id);
    // The account's last site of a PHP version takes that version's pool with it.
    await prunePools(unit, await sites.phpVersionsOfAccount(db, unit.account_id, unit.id));
    await ops.transition(db, op.id, ['running'], { status: 'running', progress: 50 });
    await rm(dirOf(unit), { recursive: true, force: true });
    await db.transaction(async (tx) => {
      const locked = await lockIn(tx, unit);
      // No apply of this site runs beside this one (the unit lock below), so none can write its
      // server block again after the removal above.
      if (locked) {
        await siteEvent(tx, 'site.deleted', locked);
        await sites.deleteSite(tx, unit.id);
      }
      await ops.transition(tx, op.id, ['running'], { status: 'succeeded', progress: 100, error: null });
    });
  }

  async function reconcile(id: string): Promise<void> {
    const unit = await sites.loadWebUnit(db, id);
    if (!unit) return driver.removeSite(id);
    if (unit.status === 'provisioning') return provision(unit);
    if (unit.status === 'deleting') return remove(unit);
    if (unit.status === 'failed') return;
    await applyUnit(
      unit,
      async () => {
        // One read serves both: applying the block changes none of the rows it reads.
        const account = await sites.phpVersionsOfAccount(db, unit.account_id, unit.id);
        await ensurePools(unit, account.versions);
        await driver.applySite(await siteSpec(unit));
        await prunePools(unit, account);
      },
      sites.webUnits.marks(db, id),
    );
  }

  // One apply of a site at a time across processes: a slower, older one never writes last.
  return (data: Record<string, unknown>) =>
    db.withSessionLock(`web.apply:${String(data.site_id)}`, () => reconcile(String(data.site_id)));
}
