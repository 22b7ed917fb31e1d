import path from 'node:path';
import { bytesUnder, packArchive } from '../../archives/pack.js';
import type { BackupPart } from '../../contribution.js';
import { byteProgress } from '../../lib/byte-progress.js';
import { publicMessage } from '../../lib/errors.js';
import { removeTree } from '../../lib/remove-tree.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import { stageBackup } from './contents.js';
import * as repo from './repo.js';
import { backupEvent } from './representation.js';
import { scheduleRetention } from './schedules/retention.js';
import type { BackupStorage, StagedArchive } from './storage.js';

const PROGRESS_EVERY_MS = 1000;

/**
 * The `backup.create` job. Safe to run again after a crash: it starts over, and the archive
 * becomes visible in storage (and the backup `completed`) only once it is whole.
 */
export function backupJobs(deps: ServiceDeps, storage: BackupStorage, parts: readonly BackupPart[]) {
  const { db, config, clock } = deps;
  const expireBeyondRetain = scheduleRetention(deps, storage);
  return async function create(operationId: string): Promise<void> {
    const op = await ops.findOperationById(db, operationId);
    if (!op || !['queued', 'running'].includes(op.status)) return;
    const backup = await repo.findBackupById(db, op.resource_id);
    if (!backup || !['queued', 'running'].includes(backup.status)) return;
    // A run pg-boss retried while an earlier one still goes (a long backup past the job's expiry)
    // takes over: the earlier run's result is discarded, whichever finishes first.
    const attempt = await db.transaction(async (tx) => {
      await ops.transition(tx, op.id, ['queued', 'running'], { status: 'running', progress: 1 });
      return repo.beginRun(tx, backup.id, clock.now());
    });
    if (attempt === undefined) return;

    const staging = path.join(config.dataDir, 'staging', `${backup.id}-${attempt}`);
    let result: { size: number; sha256: string; contents: Record<string, number> } | null = null;
    let staged: StagedArchive | null = null;
    let failure: unknown = null;
    try {
      await removeTree(staging);
      const { dirs, contents } = await stageBackup(db, parts, backup, staging);
      let files = 0;
      // Progress: the bytes of the files packed against the bytes of all of them (5-95 %; 100 once stored).
      const progress = byteProgress({
        total: await bytesUnder([staging, ...dirs.map((d) => d.dir)]),
        from: 5,
        to: 95,
        everyMs: PROGRESS_EVERY_MS,
        report: (percent) =>
          void ops.transition(db, op.id, ['running'], { status: 'running', progress: percent }).catch(() => undefined),
      });
      const archive = packArchive(config.dataDir, [{ dir: staging, as: '' }, ...dirs], (entry) => {
        if (entry.type !== 'File') return;
        files++;
        progress.add(entry.size);
      });
      staged = await storage.put(backup.storage_key, archive);
      result = { size: staged.size, sha256: staged.sha256, contents: { ...contents, files } };
    } catch (err) {
      failure = err;
    } finally {
      await removeTree(staging);
    }

    const recorded = await db.transaction(async (tx) => {
      const error =
        failure === null
          ? null
          : { code: 'backup_failed', detail: failure instanceof Error ? publicMessage(failure) : 'unknown error' };
      const done = result
        ? { status: 'completed' as const, size_bytes: result.size, sha256: result.sha256, contents: result.contents }
        : { status: 'failed' as const, error };
      if (!(await repo.updateBackup(tx, backup.id, ['running'], { ...done, completed_at: clock.now().toISOString() }, attempt)))
        return false;
      // The archive goes into place while this run's row is locked as the latest attempt: a
      // superseded run never replaces it, and `completed` is never seen before the file. Should
      // the commit then fail, the backup stays running and its retry writes the file again.
      await staged?.commit();
      await backupEvent(
        tx,
        result ? 'backup.completed' : 'backup.failed',
        (await repo.findBackupById(tx, backup.id)) as repo.BackupRow,
      );
      await ops.transition(tx, op.id, ['running'], { status: result ? 'succeeded' : 'failed', progress: 100, error });
      return true;
    });
    // A superseded run's archive goes; a completed scheduled backup may put older ones past `retain`.
    if (!recorded) await staged?.discard();
    else if (result && backup.schedule_id) await expireBeyondRetain(backup.schedule_id);
  };
}
