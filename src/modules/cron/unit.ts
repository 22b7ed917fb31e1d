import type { Db, Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import { accountHome, loginHome } from '../../layout.js';
import { isAccountUsername } from '../../lib/account-username.js';
import { parseSchedule } from '../../lib/cron-schedule.js';
import type { AgentUnitSource } from '../../provisioning/agent-units.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { CronDriver, PhpDriver } from '../../provisioning/driver.js';
import type { CronUnitSpec } from '../../provisioning/render/cron.js';
import { accountUnits, handedToAgent } from '../servers/index.js';
import * as repo from './repo.js';
import { storeRuns } from './runs.js';

/** An account's cron jobs are one unit (its cron.d file), with its state in cron_units. */
export const cronUnits = accountUnits('cron_units', 'web', JOBS.cronApply);

interface Unit {
  account_id: string;
  username: string;
  account_status: string;
  web_server_id: string;
  generation: number;
  applied_generation: number;
}

const UNIT_SELECT = `SELECT u.account_id, a.username, a.status AS account_status, a.web_server_id, u.generation,
    u.applied_generation
  FROM cron_units u JOIN accounts a ON a.id = u.account_id`;

/** The unit as committed: FOR SHARE waits for a change still being written (jobs/names.ts, UNIT_KEYS). */
async function loadUnit(db: Queryable, accountId: string): Promise<Unit | undefined> {
  return (await db.query<Unit>(`${UNIT_SELECT} WHERE u.account_id = $1 FOR SHARE OF u`, [accountId])).rows[0];
}

/** Everything the account's web server must hold of its jobs. */
async function specOf(db: Queryable, unit: Unit): Promise<CronUnitSpec> {
  const jobs = await repo.jobsOfAccount(db, unit.account_id);
  return {
    account_id: unit.account_id,
    username: unit.username,
    suspended: unit.account_status !== 'active',
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
 * and job files are exactly its jobs; an account that is gone has its file withdrawn. One apply
 * of an account at a time across processes; failures are recorded on the unit and retried.
 */
export function cronReconciler(db: Db, driver: CronDriver, php: PhpDriver, dataDir: string) {
  return async (data: Record<string, unknown>): Promise<void> => {
    const accountId = String(data.account_id);
    const username = String(data.username);
    if (!isAccountUsername(username)) throw new Error(`cron.apply: not an account username: ${username.slice(0, 40)}`);
    await db.withSessionLock(`cron.apply:${accountId}`, async () => {
      const unit = await loadUnit(db, accountId);
      if (!unit) {
        await driver.removeAccount(username);
        return;
      }
      if (await handedToAgent(db, unit.web_server_id)) return;
      await applyUnit(
        unit,
        async () => {
          const home = accountHome(dataDir, accountId);
          const user = await php.ensureUser(unit.username, home);
          await driver.applyAccount({ ...(await specOf(db, unit)), user, home: loginHome(home) });
        },
        cronUnits.marks(db, accountId),
      );
    });
  };
}

/** The cron units of the accounts whose web server is a server, as its agent pulls them and reports back; and its runs. */
export const cronAgentUnits = (jobs: JobQueue): AgentUnitSource => ({
  kind: 'cron',
  async pending(db, serverId) {
    const units = (
      await db.query<Unit>(
        `${UNIT_SELECT} WHERE a.web_server_id = $1 AND u.applied_generation < u.generation ORDER BY u.account_id`,
        [serverId],
      )
    ).rows;
    return Promise.all(
      units.map(async (unit) => ({
        kind: 'cron' as const,
        key: unit.account_id,
        generation: unit.generation,
        spec: await specOf(db, unit),
      })),
    );
  },
  report: (db, serverId, report) => cronUnits.report(db, serverId, report),
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
