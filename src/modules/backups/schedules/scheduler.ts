import { periodic } from '../../../jobs/periodic.js';
import { AppError } from '../../../lib/errors.js';
import { findAccountById } from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import { nextSlot } from './cron.js';
import * as repo from '../repo.js';
import { backupEvent } from '../representation.js';
import * as schedules from './repo.js';
import { enqueueBackup } from '../service.js';
import type { BackupStorage } from '../storage.js';

/**
 * Runs backup schedules in every process: due slots start a backup (claimed by moving the
 * slot on, so once per slot however many processes look), and backups past a schedule's
 * `retain` expire. A slot missed while no process ran is run once, at the next look.
 */
export function backupScheduler(deps: ServiceDeps, storage: BackupStorage, onError: (err: unknown) => void) {
  const { db, clock, config } = deps;

  async function runSlot(s: schedules.ScheduleRow, now: Date): Promise<void> {
    const next = nextSlot(s.cron, s.timezone, now);
    await db.transaction(async (tx) => {
      if (!(await schedules.claimSlot(tx, s.id, s.next_run_at as string, next, now))) return;
      const account = await findAccountById(tx, s.account_id);
      try {
        if (!account || account.status === 'terminating') throw new AppError('invalid_state', 'The account is being terminated.');
        await enqueueBackup(deps, tx, account, { trigger: 'schedule', schedule_id: s.id, include: s.include });
      } catch (err) {
        // A refused slot (quota, a backup still running) is skipped and said so on the schedule.
        if (!(err instanceof AppError)) throw err;
        await schedules.setLastError(tx, s.id, err.message);
      }
    });
  }

  async function expirePastRetention(): Promise<void> {
    for (const old of await schedules.pastRetention(db)) {
      const expired = await db.transaction(async (tx) => {
        const now = clock.now().toISOString();
        if (!(await repo.updateBackup(tx, old.id, ['completed'], { status: 'expired', expires_at: now }))) return false;
        await backupEvent(tx, 'backup.expired', (await repo.findBackupById(tx, old.id)) as repo.BackupRow);
        return true;
      });
      if (expired) await storage.remove(old.storage_key);
    }
  }

  async function tick(): Promise<void> {
    const now = clock.now();
    for (const s of await schedules.dueSchedules(db, now)) await runSlot(s, now);
    await expirePastRetention();
  }

  return periodic(tick, config.backupSchedulerMs, onError);
}
