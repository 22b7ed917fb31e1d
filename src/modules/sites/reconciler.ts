import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { accountHome, currentLink, releasesDir, siteDir } from '../../layout.js';
import { publicMessage } from '../../lib/errors.js';
import { removeTree } from '../../lib/remove-tree.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { PhpDriver, WebDriver } from '../../provisioning/driver.js';
import type { SiteSpec } from '../../provisioning/render/nginx.js';
import { findAccountById, limitsOf } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import { LOCAL_SERVER_ID, wakeAgent } from '../servers/index.js';
import * as sites from './repo.js';
import { problem } from './representation.js';
import { phpVersionOf, servedFrozen, servedSuspended, servedTls } from './serving.js';
import { settleProvision, settleRemoval } from './settle.js';

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

  /**
   * Before a server block points at a pool, the account's pools of every version its sites use
   * exist (a switch of version never leaves a request without one).
   */
  async function ensurePools(unit: sites.WebUnit, versions: string[]): Promise<void> {
    const own = phpVersionOf(unit);
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
    if (!sites.othersPending(account, unit.id)) await php.prunePools(unit.account_username, account.versions);
  }

  /** The unit as the web driver sees it. */
  async function siteSpec(unit: sites.WebUnit): Promise<SiteSpec> {
    const version = phpVersionOf(unit);
    return {
      id: unit.id,
      hostnames: [unit.hostname, ...unit.aliases],
      root: currentLink(dirOf(unit)),
      suspended: servedSuspended(unit),
      frozen: servedFrozen(unit),
      php: version ? { socket: php.socket(unit.account_username, version), settings: unit.php } : null,
      tls: await servedTls(db, unit, sealKey),
    };
  }

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
          .phpVersionsOfAccount(db, unit.account_id)
          .then((account) => ensurePools(unit, account.versions))
          .then(() => siteSpec({ ...unit, status: 'active' }))
          .then((spec) => driver.applySite(spec))
          .then(() => null, publicMessage);
    await db.transaction((tx) => settleProvision(tx, jobs, unit, { failure, syncError }));
    // The queue retries the apply with backoff; the site is served once the server is back.
    if (syncError !== null) throw new Error(syncError);
  }

  async function remove(unit: sites.WebUnit): Promise<void> {
    const op = await ops.openOperation(db, unit.id, 'site.delete');
    if (!op || !(await ops.transition(db, op.id, ['queued', 'running'], { status: 'running', progress: 10 }))) return;
    await driver.removeSite(unit.id);
    // The account's last site of a PHP version takes that version's pool with it.
    await prunePools(unit, await sites.phpVersionsOfAccount(db, unit.account_id));
    await ops.transition(db, op.id, ['running'], { status: 'running', progress: 50 });
    await removeTree(dirOf(unit));
    // No apply of this site runs beside this one (the unit lock below), so none can write its
    // server block again after the removal above.
    await db.transaction((tx) => settleRemoval(tx, unit));
  }

  /**
   * A site on another server is its agent's to apply: the agent listener hands it over and
   * settles it when the agent reports (agent-units.ts). Its operation runs from now on.
   */
  async function handOver(unit: sites.WebUnit): Promise<void> {
    const type = { provisioning: 'site.provision', deleting: 'site.delete' }[unit.status as string];
    const op = type ? await ops.openOperation(db, unit.id, type) : undefined;
    if (op) await ops.transition(db, op.id, ['queued'], { status: 'running', progress: 10 });
    await wakeAgent(db, unit.web_server_id);
  }

  async function reconcile(id: string): Promise<void> {
    const unit = await sites.loadWebUnit(db, id);
    if (!unit) return driver.removeSite(id);
    if (unit.web_server_id !== LOCAL_SERVER_ID) return handOver(unit);
    if (unit.status === 'provisioning') return provision(unit);
    if (unit.status === 'deleting') return remove(unit);
    if (unit.status === 'failed') return;
    await applyUnit(
      unit,
      async () => {
        // One read serves both: applying the block changes none of the rows it reads.
        const account = await sites.phpVersionsOfAccount(db, unit.account_id);
        await ensurePools(unit, account.versions);
        await driver.applySite(await siteSpec(unit));
        // Frozen: what PHP of the account still runs (a request begun before the freeze) ends now.
        if (servedFrozen(unit)) await php.endRequests(unit.account_username);
        await prunePools(unit, account);
      },
      sites.webUnits.marks(db, id),
    );
  }

  // One apply of a site at a time across processes: a slower, older one never writes last.
  return (data: Record<string, unknown>) =>
    db.withSessionLock(`web.apply:${String(data.site_id)}`, () => reconcile(String(data.site_id)));
}
