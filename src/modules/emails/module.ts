import { syncErrorGauge, type Contribution } from '../../contribution.js';
import { JOBS } from '../../jobs/names.js';
import { dkimSealKey } from '../domains/index.js';
import type { MailDriver } from '../../provisioning/driver.js';
import type { ServiceDeps } from '../deps.js';
import { mailReconciler } from './reconciler.js';
import { emailRoutes, emailSchemas } from './routes.js';
import { emailsService } from './service.js';
import { countMailSyncErrors } from './unit.js';

/** Mailboxes and forwarders, and the mail apply unit. */
export const emailsModule = (svc: ServiceDeps, driver: MailDriver): Contribution => ({
  schemas: emailSchemas,
  routes: (app) => emailRoutes(app, emailsService(svc)),
  workers: [
    {
      queue: JOBS.mailApply,
      // DKIM keys are sealed (by domains) with this; the signer gets them in the clear, 0600.
      run: mailReconciler(svc.db, driver, svc.config.dataDir, dkimSealKey(svc.config)),
    },
  ],
  gauges: [syncErrorGauge('mail', () => countMailSyncErrors(svc.db))],
});
