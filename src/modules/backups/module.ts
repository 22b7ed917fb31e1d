import { operationWorker, type BackupPart, type Contribution } from '../../contribution.js';
import { JOBS } from '../../jobs/names.js';
import { type AccountHooks, counterOf } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { backupJobs } from './jobs.js';
import { completedBackupCounts, findBackupById, storageKeysOfAccount } from './repo.js';
import { restoreJobs, unpackBackup } from './restore.js';
import { backupRoutes } from './routes.js';
import { scheduleRetention } from './schedules/retention.js';
import { backupScheduleRoutes } from './schedules/routes.js';
import { backupScheduler } from './schedules/scheduler.js';
import { backupScheduleSchemas } from './schedules/schemas.js';
import { schedulesService } from './schedules/service.js';
import { backupSchemas } from './schemas.js';
import { backupsService } from './service.js';
import type { BackupStorage } from './storage.js';

/**
 * Backups, restores and schedules. What goes into an archive and comes back out of it is each
 * module's own part (`parts`, in the order they are restored); this module orchestrates them.
 */
export function backupsModule(svc: ServiceDeps, storage: BackupStorage, parts: BackupPart[], onError: (err: unknown) => void) {
  const restore = restoreJobs(svc, storage, parts);
  const contribution: Contribution = {
    schemas: [...backupSchemas, ...backupScheduleSchemas],
    routes: (app) => {
      backupRoutes(app, backupsService(svc, storage));
      backupScheduleRoutes(app, schedulesService(svc, scheduleRetention(svc, storage)));
    },
    workers: [
      operationWorker(JOBS.backupCreate, backupJobs(svc, storage, parts)),
      {
        queue: JOBS.backupRestore,
        run: (data) => restore(String(data.operation_id), data.include as Parameters<typeof restore>[1]),
      },
    ],
    loops: [backupScheduler(svc, onError)],
  };
  // An account's usage counts its backups; its termination removes their archives.
  const accountHooks: Partial<AccountHooks> = {
    counters: [counterOf('backups', completedBackupCounts)],
    removals: [
      async (accountId) => {
        for (const key of await storageKeysOfAccount(svc.db, accountId)) await storage.remove(key);
      },
    ],
  };
  // A move from a backup (its source unreachable) copies the archive of a completed backup of the account.
  const copies = {
    async completed(accountId: string, backupId: string): Promise<boolean> {
      const row = await findBackupById(svc.db, backupId);
      return row?.account_id === accountId && row.status === 'completed';
    },
    async unpack(backupId: string, staging: string): Promise<void> {
      const row = await findBackupById(svc.db, backupId);
      if (row?.status !== 'completed') throw new Error('the backup is no longer available');
      await unpackBackup(storage, row, staging);
    },
  };
  return { contribution, accountHooks, copies };
}
