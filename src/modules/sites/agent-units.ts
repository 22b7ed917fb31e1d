import { stat } from 'node:fs/promises';
import { archiveStream } from '../../archives/pack.js';
import type { JobQueue } from '../../jobs/queue.js';
import { releaseDir, siteDir } from '../../layout.js';
import type { AgentSiteSpec, AgentUnitSource } from '../../provisioning/agent-units.js';
import { findAccountById, limitsOf } from '../accounts/index.js';
import * as sites from './repo.js';
import { phpVersionOf, servedFrozen, servedSuspended, servedTls } from './serving.js';
import { settleProvision, settleRemoval } from './settle.js';

/**
 * The sites of the accounts placed on a web server, as its agent pulls them and reports back.
 * A report settles what the web reconciler settles for the local server: a provisioned site
 * becomes `active`, a deleted one goes, any other is marked applied or failed. A report for an
 * older generation than the site's settles nothing: the newer one is handed over next.
 */
export function webAgentUnits(jobs: JobQueue, sealKey: Buffer, dataDir: string): AgentUnitSource {
  return {
    kind: 'web',
    waiting: sites.webUnitsWaitingOnServer,
    async pending(db, serverId) {
      // What the account contributes is looked up once per account, not once per site.
      const accountShare = async (accountId: string) => {
        const [account, php] = await Promise.all([findAccountById(db, accountId), sites.phpVersionsOfAccount(db, accountId)]);
        return { workers: account ? limitsOf(account).php_workers : 1, php };
      };
      const shares = new Map<string, Awaited<ReturnType<typeof accountShare>>>();
      const units = [];
      for (const unit of await sites.pendingWebUnitsOnServer(db, serverId)) {
        const share = shares.get(unit.account_id) ?? (await accountShare(unit.account_id));
        shares.set(unit.account_id, share);
        const { workers, php } = share;
        const version = phpVersionOf(unit);
        const spec: AgentSiteSpec = {
          site_id: unit.id,
          account_id: unit.account_id,
          username: unit.account_username,
          hostnames: [unit.hostname, ...unit.aliases],
          // A site being provisioned is served as it will be once active.
          suspended: servedSuspended(unit.status === 'provisioning' ? { ...unit, status: 'active' } : unit),
          frozen: servedFrozen(unit),
          php: version ? { version, settings: unit.php } : null,
          tls: await servedTls(db, unit, sealKey),
          php_versions: php.versions,
          php_workers: workers,
          prune: !sites.othersPending(php, unit.id),
          removed: unit.status === 'deleting',
          release: unit.current_deployment_id,
        };
        units.push({ kind: 'web' as const, key: unit.id, generation: unit.generation, spec });
      }
      return units;
    },

    async report(db, serverId, report) {
      const unit = await sites.loadWebUnit(db, report.key);
      if (!unit || unit.web_server_id !== serverId) return 'foreign';
      if (report.generation > unit.generation) return 'future';
      if (report.generation < unit.generation) return 'recorded';
      const error = report.error ?? null;
      if (unit.status === 'provisioning') await settleProvision(db, jobs, unit, { failure: null, syncError: error });
      else if (unit.status === 'deleting' && error === null) await settleRemoval(db, unit);
      else {
        const marks = sites.webUnits.marks(db, unit.id);
        await (error === null ? marks.applied(report.generation) : marks.failed(error));
      }
      return 'recorded';
    },

    /** The site's live release, packed from this process's copy (the deployment stored it here). */
    async artifact(db, serverId, key, name) {
      const unit = await sites.loadWebUnit(db, key);
      if (!unit || unit.web_server_id !== serverId) return 'foreign';
      if (name !== unit.current_deployment_id) return undefined;
      const dir = releaseDir(siteDir(dataDir, unit.account_id, unit.id), name);
      return (await stat(dir).catch(() => null))?.isDirectory() ? archiveStream(dataDir, [{ dir, as: '' }]) : undefined;
    },

    async measured(db, serverId, measurements) {
      await sites.recordMeasuredBytes(db, serverId, measurements);
      await sites.recordTraffic(
        db,
        serverId,
        measurements.flatMap((m) => (m.traffic ?? []).map((t) => ({ site_id: m.key, ...t }))),
      );
    },
  };
}
