import { type Contribution, type AccountShare, syncErrorGauge } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { PhpDriver, SshDriver } from '../../provisioning/driver.js';
import { type AccountHooks, counterOf } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import type { PlanHooks } from '../plans/index.js';
import { sshBackupPart } from './backup.js';
import { loginCollector } from './logins.js';
import { keyCounts } from './repo.js';
import { sshRoutes } from './routes.js';
import { sshSchemas } from './schemas.js';
import { sshService } from './service.js';
import { sshAgentUnits, sshReconciler, sshUnits } from './unit.js';

/** SSH access and keys, and their apply unit (an account's key file, groups and chroot link). */
export function sshModule(svc: ServiceDeps, drivers: { ssh: SshDriver; php: PhpDriver }, onError: (err: unknown) => void) {
  const { db, config, jobs } = svc;
  const contribution: Contribution = {
    schemas: sshSchemas,
    routes: (app) => sshRoutes(app, sshService(svc)),
    workers: [{ queue: JOBS.sshApply, run: sshReconciler(db, drivers.ssh, drivers.php, config.dataDir) }],
    loops: [loginCollector(db, drivers.ssh, config.ssh.collectMs, onError)],
    gauges: [syncErrorGauge('ssh', () => sshUnits.countErrors(db))],
  };
  // A suspension refuses the next login, its end allows it again; a new plan may allow less; a
  // termination takes the keys away at once, and the apply after the row has gone withdraws the rest.
  const touch = (tx: Queryable, accountId: string) => sshUnits.touchExisting(tx, jobs, accountId);
  const accountHooks: Partial<AccountHooks> = {
    statusChanged: [touch],
    planChanged: [touch],
    terminating: [touch],
    counters: [counterOf('ssh_keys', keyCounts)],
  };
  // A plan allowing less (or more) SSH re-renders its accounts' units.
  const planHooks: PlanHooks = {
    changed: [
      async (tx, planId, before, after) => {
        if (before.ssh_access !== after.ssh_access) await sshUnits.touchOnPlan(tx, jobs, planId);
      },
    ],
  };
  return {
    contribution,
    accountHooks,
    planHooks,
    backupPart: sshBackupPart(svc),
    agentUnits: sshAgentUnits,
    oldestPending: sshUnits.oldestPendingOn,
    share: {
      role: 'web',
      applied: async (accountId) => (await sshUnits.unapplied(db, 't.account_id = $1', accountId)) === 0,
      withdrawLocal: (account) => drivers.ssh.removeAccount(account.username),
    } satisfies AccountShare,
  };
}
