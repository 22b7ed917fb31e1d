import type { Caller } from '../../auth/caller.js';
import type { PageParams } from '../../db/paging.js';
import { invalid, notFound, publicMessage } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion, staleVersion } from '../../lib/if-match.js';
import { mergeFields } from '../../lib/merge-patch.js';
import type { CronDriver } from '../../provisioning/driver.js';
import { type AccountRow, limitsOf, lockBelowLimit, reachableAccount, writableAccount } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { publishResourceEvent } from '../publishing/index.js';
import { LOCAL_SERVER_ID, runAgentTask } from '../servers/index.js';
import * as repo from './repo.js';
import { jobEvent, presentJobs, toRun } from './representation.js';
import { checkSchedule, commandErrors } from './rules.js';
import type { CreateCronJob, CronJob, CronJobPatch, CronRun } from './schemas.js';
import { cronUnits } from './unit.js';

const DEFAULT_TIMEOUT_S = 3600;

/** Field errors of a job's schedule (against the account's plan) and command; a 422 when any. */
function check(account: AccountRow, f: repo.JobFields): void {
  const errors = [...checkSchedule(f.schedule, limitsOf(account).cron_min_interval_minutes).errors, ...commandErrors(f.command)];
  if (errors.length) throw invalid(errors);
}

export function cronService({ db, clock, jobs }: ServiceDeps, driver: CronDriver) {
  /**
   * Starts the run where the account's web server runs its jobs: this process's runner, or the
   * server's agent (which has started it once the task is reported). Why it did not start, if so.
   */
  async function startRun(account: AccountRow, jobId: string, runId: string): Promise<Partial<repo.RunRow> | null> {
    if (account.web_server_id === LOCAL_SERVER_ID) {
      const refused = await driver.runNow(jobId, runId);
      return refused && { status: 'skipped', reason: refused.skipped };
    }
    try {
      await runAgentTask(
        db,
        clock,
        account.web_server_id,
        { action: 'cron.run', job_id: jobId, run_id: runId },
        { timeoutMs: 60_000 },
      );
      return null;
    } catch (err) {
      return { status: 'failed', reason: publicMessage(err) };
    }
  }

  const present = async (row: repo.JobRow): Promise<CronJob> => (await presentJobs(db, [row], clock.now()))[0] as CronJob;

  /** The job of the account in the caller's reach; 404 otherwise. */
  async function load(caller: Caller, accountId: string, id: string): Promise<repo.JobRow> {
    const row = await repo.findJob(db, caller, accountId, id);
    if (!row) throw notFound('cron job');
    return row;
  }

  return {
    load,
    reachableAccount: (caller: Caller, accountId: string) => reachableAccount(db, caller, accountId),

    async list(caller: Caller, accountId: string, page: PageParams): Promise<CronJob[]> {
      await reachableAccount(db, caller, accountId);
      return presentJobs(db, await repo.listJobs(db, accountId, page), clock.now());
    },

    get: async (caller: Caller, accountId: string, id: string) => present(await load(caller, accountId, id)),

    /** `max_cron_jobs` counted under the account's row lock; the unit applied after the commit. */
    async create(caller: Caller, accountId: string, input: CreateCronJob): Promise<CronJob> {
      const account = await writableAccount(db, caller, accountId);
      const fields: repo.JobFields = {
        name: input.name,
        schedule: input.schedule.trim(),
        command: input.command,
        timeout_s: input.timeout_s ?? DEFAULT_TIMEOUT_S,
        overlap: input.overlap ?? 'skip',
        enabled: input.enabled ?? true,
        notify: { on: input.notify?.on ?? 'never', email: input.notify?.email ?? null },
      };
      check(account, fields);
      const id = newId('cjb');
      return db.transaction(async (tx) => {
        await lockBelowLimit(tx, account.id, 'max_cron_jobs', repo.countJobs);
        await repo.insertJob(tx, id, account.id, fields);
        await cronUnits.touch(tx, jobs, account);
        return jobEvent(tx, 'created', id, clock.now());
      });
    },

    /** A merge patch; `command` is replaced whole (an `argv` and a `shell` never mix). */
    async update(caller: Caller, accountId: string, id: string, patch: CronJobPatch, expectedVersion?: number): Promise<CronJob> {
      const current = await load(caller, accountId, id);
      const account = await writableAccount(db, caller, accountId);
      checkVersion(expectedVersion, current.version);
      const { command, ...rest } = patch;
      const fields = mergeFields(repo.jobFields(current), rest);
      if (command) fields.command = command;
      fields.schedule = fields.schedule.trim();
      check(account, fields);
      return db.transaction(async (tx) => {
        if (!(await repo.updateJob(tx, id, current.version, fields))) throw staleVersion();
        await cronUnits.touch(tx, jobs, account);
        return jobEvent(tx, 'updated', id, clock.now());
      });
    },

    /** Its runs go with it; the account's cron file loses its line at the next apply. */
    async remove(caller: Caller, accountId: string, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, accountId, id);
      const account = await writableAccount(db, caller, accountId);
      checkVersion(expectedVersion, current.version);
      const shown = await present(current);
      await db.transaction(async (tx) => {
        await repo.deleteJob(tx, id);
        await cronUnits.touch(tx, jobs, account);
        await publishResourceEvent(tx, 'cron_job.deleted', 'cron_job', current, shown);
      });
    },

    /**
     * A run now (202 with the run, `running`): recorded first, then started after the commit by
     * the server's runner, which reports its end. Where jobs never run (the embedded default)
     * the run is `skipped` with the reason at once.
     */
    async run(caller: Caller, accountId: string, id: string): Promise<CronRun> {
      const job = await load(caller, accountId, id);
      const account = await writableAccount(db, caller, accountId);
      const run: repo.RunRow = {
        id: newId('crn'),
        job_id: job.id,
        trigger: 'manual',
        status: 'running',
        started_at: clock.now().toISOString(),
        finished_at: null,
        exit_code: null,
        output_tail: '',
        reason: null,
      };
      await db.transaction(async (tx) => {
        await repo.insertRun(tx, run);
        await repo.pruneRuns(tx, job.id);
      });
      const ended = await startRun(account, job.id, run.id);
      if (ended) {
        Object.assign(run, { finished_at: clock.now().toISOString(), ...ended });
        await db.transaction((tx) => repo.recordRun(tx, run));
      }
      return toRun(run);
    },

    async runs(caller: Caller, accountId: string, id: string, page: PageParams): Promise<CronRun[]> {
      await load(caller, accountId, id);
      return (await repo.listRuns(db, id, page)).map(toRun);
    },
  };
}
export type CronService = ReturnType<typeof cronService>;
