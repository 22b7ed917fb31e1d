import { type Contribution, type AccountShare, syncErrorGauge } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { CronDriver, PhpDriver } from '../../provisioning/driver.js';
import { type AccountHooks, counterOf } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { cronBackupPart } from './backup.js';
import { cronNotifier } from './notify.js';
import { jobCounts } from './repo.js';
import { cronRoutes } from './routes.js';
import { runCollector } from './runs.js';
import { cronSchemas } from './schemas.js';
import { cronService } from './service.js';
import { cronAgentUnits, cronReconciler, cronUnits } from './unit.js';

/** Cron jobs, their apply unit (an account's cron file) and the runs collected from the runner. */
export function cronModule(
  svc: ServiceDeps,
  drivers: { cron: CronDriver; php: PhpDriver },
  log: { error: (err: unknown) => void; warn: (message: string) => void },
) {
  const { cron: driver, php } = drivers;
  const { db, config, jobs } = svc;
  const contribution: Contribution = {
    schemas: cronSchemas,
    routes: (app) => cronRoutes(app, cronService(svc, driver)),
    workers: [
      { queue: JOBS.cronApply, run: cronReconciler(db, driver, php, config.dataDir) },
      { queue: JOBS.cronNotify, run: cronNotifier(db, config.smtp, log.warn) },
    ],
    loops: [runCollector(svc, driver, config.cron.collectMs, log.error)],
    gauges: [syncErrorGauge('cron', () => cronUnits.countErrors(db))],
  };
  // A suspension takes the account's lines out of its cron file, its end puts them back; a
  // termination stops them at once, and the apply after the row has gone removes the file.
  const touch = (tx: Queryable, accountId: string) => cronUnits.touchExisting(tx, jobs, accountId);
  const accountHooks: Partial<AccountHooks> = {
    statusChanged: [touch],
    terminating: [touch],
    counters: [counterOf('cron_jobs', jobCounts)],
  };
  return {
    contribution,
    accountHooks,
    backupPart: cronBackupPart(svc),
    agentUnits: cronAgentUnits(jobs),
    oldestPending: cronUnits.oldestPendingOn,
    share: {
      role: 'web',
      applied: async (accountId) => (await cronUnits.unapplied(db, 't.account_id = $1', accountId)) === 0,
      withdrawLocal: (account) => driver.removeAccount(account.username),
    } satisfies AccountShare,
  };
}
