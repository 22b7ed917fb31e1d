import { periodic } from '../../../jobs/periodic.js';
import { AppError, conflict } from '../../../lib/errors.js';
import { findAccountById } from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import { enqueueBackup } from '../service.js';
import { nextSlot } from './cron.js';
import * as schedules from './repo.js';

/**
 * Runs backup schedules in every process: due slots start a backup (claimed by moving the
 * slot on, so once per slot however many processes look). A slot missed while no process ran is
 * run once, at the next look. (Retention runs as a schedule's backups complete: retention.ts.)
 */
export function backupScheduler(deps: ServiceDeps, onError: (err: unknown) => void) {
  const { db, clock, config } = deps;

  async function runSlot(s: schedules.ScheduleRow, now: Date): Promise<void> {
    const next = nextSlot(s.cron, s.timezone, now);
    await db.transaction(async (tx) => {
      if (!(await schedules.claimSlot(tx, s.id, s.next_run_at as string, next, now))) return;
      const account = await findAccountById(tx, s.account_id);
      try {
        if (!account || account.status === 'terminating') throw conflict('invalid_state', 'The account is being terminated.');
        await enqueueBackup(deps, tx, account, { trigger: 'schedule', schedule_id: s.id, include: s.include });
      } catch (err) {
        // A refused slot (quota, a backup still running) is skipped and said so on the schedule.
        if (!(err instanceof AppError)) throw err;
        await schedules.setLastError(tx, s.id, err.message);
      }
    });
  }

  async function tick(): Promise<void> {
    const now = clock.now();
    for (const s of await schedules.dueSchedules(db, now)) await runSlot(s, now);
  }

  return periodic(tick, config.backupSchedulerMs, onError);
}
