import type { Db, Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import { accountHome, loginHome } from '../../layout.js';
import { parseSchedule } from '../../lib/cron-schedule.js';
import type { AgentUnitSource } from '../../provisioning/agent-units.js';
import type { CronDriver, PhpDriver } from '../../provisioning/driver.js';
import type { CronUnitSpec } from '../../provisioning/render/cron.js';
import { type AccountUnitRow, accountUnits } from '../servers/index.js';
import * as repo from './repo.js';
import { storeRuns } from './runs.js';

/** An account's cron jobs are one unit (its cron.d file), with its state in cron_units. */
export const cronUnits = accountUnits({ table: 'cron_units', role: 'web', queue: JOBS.cronApply, kind: 'cron' });

/** Everything the account's web server must hold of its jobs. */
async function specOf(db: Queryable, unit: AccountUnitRow): Promise<CronUnitSpec> {
  const jobs = await repo.jobsOfAccount(db, unit.account_id);
  return {
    account_id: unit.account_id,
    username: unit.username,
    suspended: unit.account_status !== 'active',
    frozen: unit.account_status === 'frozen',
    jobs: jobs.map((j) => ({
      id: j.id,
      fields: parseSchedule(j.schedule).fields,
      command: j.command,
      timeout_s: j.timeout_s,
      overlap: j.overlap,
      enabled: j.enabled,
    })),
  };
}

/**
 * The `cron.apply` job: the account's Unix user exists (its jobs run as it), then its cron file
 * and job files are exactly its jobs; an account that is gone has its file withdrawn.
 */
export const cronReconciler = (db: Db, driver: CronDriver, php: PhpDriver, dataDir: string) =>
  cronUnits.reconciler(db, {
    async apply(unit) {
      const home = accountHome(dataDir, unit.account_id);
      const user = await php.ensureUser(unit.username, home);
      await driver.applyAccount({ ...(await specOf(db, unit)), user, home: loginHome(home) });
    },
    remove: (username) => driver.removeAccount(username),
  });

/** The cron units of the accounts whose web server is a server, as its agent pulls them and reports back; and its runs. */
export const cronAgentUnits = (jobs: JobQueue): AgentUnitSource => ({
  ...cronUnits.agentSource(specOf),
  /** Runs of jobs whose account's web server is this one; another server's are ignored (and forgotten there). */
  async runs(db, serverId, runs) {
    const own = new Set(await repo.jobsOnServer(db, serverId, [...new Set(runs.map((r) => r.job_id))]));
    const stored = await storeRuns(
      db,
      jobs,
      runs.filter((r) => own.has(r.job_id)),
    );
    return [...stored, ...runs.filter((r) => !own.has(r.job_id)).map((r) => r.id)];
  },
});
