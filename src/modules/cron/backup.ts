import { type BackupPart, RestoreRefused, type StagedPart } from '../../contribution.js';
import { findAccountById, lockBelowLimit } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import * as repo from './repo.js';
import { jobEvent, presentJobs } from './representation.js';
import type { CronJob } from './schemas.js';
import { cronUnits } from './unit.js';

/** What a backup's manifest holds of an account's cron jobs. */
interface CronManifest {
  cron_jobs?: CronJob[];
}

/**
 * Cron jobs in backups: each job as the API shows it (its runs are history, not kept). A restore
 * puts each back as the backup holds it (its id, schedule, command and settings), re-creating
 * what is gone within the plan's `max_cron_jobs`, and applies the account's cron unit once.
 */
export function cronBackupPart({ db, clock, jobs }: ServiceDeps): BackupPart {
  return {
    name: 'cron_jobs',

    async stage(accountId: string): Promise<StagedPart> {
      const rows = await repo.jobsOfAccount(db, accountId);
      return {
        manifest: { cron_jobs: await presentJobs(db, rows, clock.now()) } satisfies CronManifest,
        dirs: [],
        contents: { cron_jobs: rows.length },
      };
    },

    // Rows only: the target's cron file is rendered from them once the account is placed there.
    land: async () => undefined,

    async restore(accountId: string, manifest: CronManifest): Promise<void> {
      const wanted = manifest.cron_jobs ?? [];
      if (!wanted.length) return;
      await db.transaction(async (tx) => {
        const account = await findAccountById(tx, accountId);
        if (!account) throw new RestoreRefused('invalid_state', 'The account no longer exists.');
        for (const job of wanted) {
          const fields = repo.jobFields(job);
          const current = await repo.findJobById(tx, job.id);
          if (current && current.account_id !== accountId)
            throw new RestoreRefused('already_exists', `Cron job ${job.id} belongs to another account.`);
          if (current) await repo.updateJob(tx, job.id, current.version, fields);
          else {
            await lockBelowLimit(tx, accountId, 'max_cron_jobs', repo.countJobs);
            await repo.insertJob(tx, job.id, accountId, fields);
          }
          await jobEvent(tx, current ? 'updated' : 'created', job.id, clock.now());
        }
        await cronUnits.touch(tx, jobs, account);
      });
    },
  };
}
