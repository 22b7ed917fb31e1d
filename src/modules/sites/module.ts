import { operationWorker, syncErrorGauge, type Contribution } from '../../contribution.js';
import { JOBS } from '../../jobs/names.js';
import type { WebDriver } from '../../provisioning/driver.js';
import type { ServiceDeps } from '../deps.js';
import { deploymentsService } from './deployments/service.js';
import { deploymentJob } from './jobs.js';
import { webReconciler } from './reconciler.js';
import { countWebSyncErrors } from './repo.js';
import { siteRoutes, siteSchemas } from './routes.js';
import { siteCancelHandlers, sitesService } from './service.js';

/** Sites and deployments: the web apply unit (the site's lifecycle with it) and the deployment job. */
export function sitesModule(svc: ServiceDeps, driver: WebDriver) {
  const sites = sitesService(svc);
  const deployments = deploymentsService(svc, sites);
  const contribution: Contribution = {
    schemas: siteSchemas,
    routes: (app) => siteRoutes(app, sites, deployments),
    workers: [{ queue: JOBS.webApply, run: webReconciler(svc, driver) }, operationWorker(JOBS.siteDeploy, deploymentJob(svc))],
    gauges: [syncErrorGauge('web', () => countWebSyncErrors(svc.db))],
  };
  return { contribution, sites, deployments, cancelHandlers: siteCancelHandlers(svc.jobs) };
}
