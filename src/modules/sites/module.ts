import { type Contribution, type AccountShare, operationWorker, syncErrorGauge } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import { periodic } from '../../jobs/periodic.js';
import type { PhpDriver, WebDriver } from '../../provisioning/driver.js';
import { forwardedSite } from '../../provisioning/render/nginx.js';
import type { Issuer } from '../../tls/issuer.js';
import type { ServiceDeps } from '../deps.js';
import type { AcmeChallengeRecords } from '../domains/index.js';
import { LOCAL_SERVER_ID } from '../servers/index.js';
import { webAgentUnits } from './agent-units.js';
import { sitesBackupPart } from './backup.js';
import { certificateJob } from './certificates/issue.js';
import { certificateRenewal } from './certificates/renewal.js';
import { certificateRoutes } from './certificates/routes.js';
import { certificatesService } from './certificates/service.js';
import { siteSolver, webServerProofs } from './certificates/solver.js';
import { deploymentJob } from './deployments/job.js';
import { deploymentRoutes } from './deployments/routes.js';
import { deploymentSchemas } from './deployments/schemas.js';
import { deploymentsService } from './deployments/service.js';
import { webReconciler } from './reconciler.js';
import { loadWebUnit, recordTraffic, siteIdsOfAccount, webUnits } from './repo.js';
import { siteRoutes } from './routes.js';
import { runtimeRoutes } from './runtimes.js';
import { siteSchemas } from './schemas.js';
import { siteCancelHandlers, sitesService } from './service.js';
import { servedTls } from './serving.js';

/**
 * Sites, deployments and certificates: the web apply unit (the site's lifecycle with it), the
 * deployment job, certificate issuance and its renewal loop, and sites' part of backups.
 */
export function sitesModule(
  svc: ServiceDeps,
  driver: WebDriver,
  php: PhpDriver,
  acmeChallenges: AcmeChallengeRecords,
  /** The configured issuer, and the key that seals certificates' private keys (the issuers module's). */
  tls: { issuer: Issuer; sealKey: Buffer },
  onError: (err: unknown) => void,
) {
  const { config } = svc;
  const { issuer, sealKey } = tls;
  const sites = sitesService(svc, { php: php.versions });
  const deployments = deploymentsService(svc, sites, php);
  const certificates = certificatesService(svc, { sealKey, load: sites.load });
  const contribution: Contribution = {
    schemas: [...siteSchemas, ...deploymentSchemas],
    routes: (app) => {
      siteRoutes(app, sites);
      deploymentRoutes(app, sites, deployments);
      runtimeRoutes(app, php.versions);
      certificateRoutes(app, sites, certificates);
    },
    workers: [
      { queue: JOBS.webApply, run: webReconciler(svc, driver, php, sealKey) },
      operationWorker(JOBS.siteDeploy, deploymentJob(svc)),
      {
        queue: JOBS.certificateIssue,
        run: certificateJob(svc, {
          issuer,
          sealKey,
          solverFor: (site) =>
            siteSolver(webServerProofs({ ...svc, dataDir: config.dataDir }, site.account_id), site.account_id, acmeChallenges),
        }),
      },
    ],
    loops: [
      certificateRenewal(svc, onError),
      // What the sites served here sent, from the web server's access logs (an agent sends its own).
      ...(driver.collectTraffic
        ? [
            periodic(
              async () => recordTraffic(svc.db, LOCAL_SERVER_ID, await driver.collectTraffic!()),
              config.nginx.trafficMs,
              onError,
            ),
          ]
        : []),
    ],
    gauges: [syncErrorGauge('web', () => webUnits.countErrors(svc.db))],
  };
  return {
    contribution,
    oldestPending: (q: Queryable, serverIds: string[]) =>
      webUnits.oldestPendingOn(q, serverIds, '(SELECT a.web_server_id FROM accounts a WHERE a.id = t.account_id)'),
    agentUnits: webAgentUnits(svc.jobs, sealKey, config.dataDir),
    backupPart: sitesBackupPart(svc, sites, deployments),
    cancelHandlers: siteCancelHandlers(svc.jobs),
    share: {
      role: 'web',
      applied: async (accountId) =>
        (await webUnits.unapplied(svc.db, "t.account_id = $1 AND t.status <> 'failed'", accountId)) === 0,
      // Its sites stop being served here, then the account's pools and Unix user go (after cron's and SSH's shares).
      async withdrawLocal(account) {
        for (const id of await siteIdsOfAccount(svc.db, account.id)) await driver.removeSite(id);
        await php.removeAccount(account.username);
      },
      // Its sites answer by proxying to the new web server, with the certificates they have here.
      async forwardLocal(accountId, to) {
        for (const id of await siteIdsOfAccount(svc.db, accountId)) {
          const unit = await loadWebUnit(svc.db, id);
          if (unit?.status !== 'active' && unit?.status !== 'suspended') continue;
          const tls = await servedTls(svc.db, unit, sealKey);
          await driver.applySite(forwardedSite({ id, hostnames: [unit.hostname, ...unit.aliases], tls }, to));
        }
      },
    } satisfies AccountShare,
  };
}
