import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/repo.js';
import { packArchive } from './archive.js';
import { stageBackup } from './contents.js';
import * as repo from './repo.js';
import { backupEvent } from './representation.js';
import type { BackupStorage } from './storage.js';

const PROGRESS_EVERY_MS = 1000;

/**
 * The `backup.create` job. Safe to run again after a crash: it starts over, and the archive
 * becomes visible in storage (and the backup `completed`) only once it is whole.
 */
export function backupJobs({ db, config, clock }: ServiceDeps, storage: BackupStorage) {
  return async function create(operationId: string): Promise<void> {
    const op = await ops.findOperationById(db, operationId);
    if (!op || !['queued', 'running'].includes(op.status)) return;
    const backup = await repo.findBackupById(db, op.resource_id);
    if (!backup || !['queued', 'running'].includes(backup.status)) return;
    await db.transaction(async (tx) => {
      await ops.transition(tx, op.id, ['queued', 'running'], { status: 'running', progress: 1 });
      await repo.updateBackup(tx, backup.id, ['queued', 'running'], { status: 'running', started_at: clock.now().toISOString() });
    });

    const staging = path.join(config.dataDir, 'staging', backup.id);
    let result: { size: number; sha256: string; contents: Record<string, number> } | null = null;
    let failure: unknown = null;
    try {
      await rm(staging, { recursive: true, force: true });
      const { dirs, contents } = await stageBackup(db, config.dataDir, config.nameservers, backup, staging);
      let files = 0;
      let lastReport = Date.now();
      const archive = packArchive(path.resolve(config.dataDir), path.resolve(staging), dirs, (entry) => {
        if (entry.type !== 'File') return;
        files++;
        if (Date.now() - lastReport < PROGRESS_EVERY_MS) return;
        lastReport = Date.now();
        // Progress by files packed, bounded below 100 until the archive is stored.
        const progress = Math.min(95, 5 + Math.round(90 * (1 - 1 / (1 + files / 1000))));
        void ops.transition(db, op.id, ['running'], { status: 'running', progress }).catch(() => undefined);
      });
      const stored = await storage.put(backup.storage_key, archive);
      result = { ...stored, contents: { ...contents, files } };
    } catch (err) {
      failure = err;
      await storage.remove(backup.storage_key).catch(() => undefined);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }

    await db.transaction(async (tx) => {
      const error =
        failure === null ? null : { code: 'backup_failed', detail: failure instanceof Error ? failure.message : 'unknown error' };
      const done = result
        ? { status: 'completed' as const, size_bytes: result.size, sha256: result.sha256, contents: result.contents }
        : { status: 'failed' as const, error };
      if (!(await repo.updateBackup(tx, backup.id, ['running'], { ...done, completed_at: clock.now().toISOString() }))) return;
      await backupEvent(
        tx,
        result ? 'backup.completed' : 'backup.failed',
        (await repo.findBackupById(tx, backup.id)) as repo.BackupRow,
      );
      await ops.transition(tx, op.id, ['running'], { status: result ? 'succeeded' : 'failed', progress: 100, error });
    });
  };
}
