import type { ServiceDeps } from '../../deps.js';
import * as repo from '../repo.js';
import { backupEvent } from '../representation.js';
import type { BackupStorage } from '../storage.js';
import * as schedules from './repo.js';

/**
 * A schedule's retention: its completed backups beyond the newest `retain` expire (event, then
 * the archive removed). Run when one of its backups completes and when `retain` is lowered — the
 * only two moments the surplus grows — so each look reads one schedule's backups, never every
 * schedule's. Should a process stop between a completion and this, the schedule's next
 * completion expires what was left.
 */
export function scheduleRetention({ db, clock }: ServiceDeps, storage: BackupStorage) {
  return async function expireBeyondRetain(scheduleId: string): Promise<void> {
    for (const old of await schedules.beyondRetain(db, scheduleId)) {
      const expired = await db.transaction(async (tx) => {
        const now = clock.now().toISOString();
        if (!(await repo.updateBackup(tx, old.id, ['completed'], { status: 'expired', expires_at: now }))) return false;
        await backupEvent(tx, 'backup.expired', (await repo.findBackupById(tx, old.id)) as repo.BackupRow);
        return true;
      });
      if (expired) await storage.remove(old.storage_key);
    }
  };
}
export type ExpireBeyondRetain = ReturnType<typeof scheduleRetention>;
