import { operationWorker, type Contribution } from '../../contribution.js';
import { JOBS } from '../../jobs/names.js';
import type { WebDriver } from '../../provisioning/driver.js';
import type { ServiceDeps } from '../deps.js';
import { deploymentsService } from './deployments/service.js';
import { siteJobs } from './jobs.js';
import { webReconciler } from './reconciler.js';
import { siteRoutes, siteSchemas } from './routes.js';
import { siteCancelHandlers, sitesService } from './service.js';

/** Sites and deployments: the web apply unit and the site operations' jobs. */
export function sitesModule(svc: ServiceDeps, driver: WebDriver) {
  const sites = sitesService(svc);
  const deployments = deploymentsService(svc, sites);
  const work = siteJobs(svc, driver);
  const contribution: Contribution = {
    schemas: siteSchemas,
    routes: (app) => siteRoutes(app, sites, deployments),
    workers: [
      { queue: JOBS.webApply, run: webReconciler(svc.db, driver, svc.config.dataDir) },
      operationWorker(JOBS.siteProvision, work.provision),
      operationWorker(JOBS.siteDelete, work.remove),
      operationWorker(JOBS.siteDeploy, work.deploy),
    ],
  };
  return { contribution, sites, deployments, cancelHandlers: siteCancelHandlers(svc.jobs) };
}
