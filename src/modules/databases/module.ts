import { type Contribution, type AccountShare, syncErrorGauge } from '../../contribution.js';
import { JOBS } from '../../jobs/names.js';
import { periodic } from '../../jobs/periodic.js';
import type { DatabaseDriver } from '../../provisioning/driver.js';
import type { ServiceDeps } from '../deps.js';
import { LOCAL_SERVER_ID } from '../servers/index.js';
import { databasesBackupPart } from './backup.js';
import { recordSizes } from './repo.js';
import { databaseRoutes } from './routes.js';
import { databaseSchemas } from './schemas.js';
import { databasesService } from './service.js';
import { databaseReconciler, databaseUnits } from './unit.js';

/** Databases, their users and grants; the database apply unit; the size meter; their part of backups. */
export function databasesModule(svc: ServiceDeps, driver: DatabaseDriver, onError: (err: unknown) => void) {
  const { db, config } = svc;
  const contribution: Contribution = {
    schemas: databaseSchemas,
    routes: (app) => databaseRoutes(app, databasesService(svc)),
    workers: [{ queue: JOBS.databaseApply, run: databaseReconciler(db, driver) }],
    // Sizes grow between applies: each process measures them now and then (an UPDATE only where they changed).
    loops: [periodic(async () => recordSizes(db, LOCAL_SERVER_ID, await driver.measure()), config.databaseMeterMs, onError)],
    gauges: [syncErrorGauge('database', () => databaseUnits.countErrors(db))],
  };
  return {
    contribution,
    backupPart: databasesBackupPart(db, svc.clock, svc.jobs, driver),
    oldestPending: databaseUnits.oldestPendingOn,
    share: {
      role: 'database',
      applied: async (accountId) => (await databaseUnits.unapplied(db, 't.account_id = $1', accountId)) === 0,
      withdrawLocal: (account) => driver.removeAccount(`${account.username}_`),
    } satisfies AccountShare,
  };
}
