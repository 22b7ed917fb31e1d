import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Writable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { unpackArchive } from '../../archives/unpack.js';
import { RestoreRefused, type BackupPart, type BackupPartName } from '../../contribution.js';
import { byteProgress } from '../../lib/byte-progress.js';
import { publicMessage } from '../../lib/errors.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import * as repo from './repo.js';
import { backupEvent } from './representation.js';
import { digestingStream, type BackupStorage } from './storage.js';

/**
 * A completed backup's archive unpacked into `staging` (emptied first) once its SHA-256 is checked
 * (a damaged one is refused with `checksum_mismatch`, nothing unpacked); `counter` counts the
 * bytes of each of the two reads.
 */
export async function unpackBackup(
  storage: BackupStorage,
  backup: repo.BackupRow,
  staging: string,
  counter: () => Transform = () => new PassThrough(),
): Promise<void> {
  const digest = digestingStream();
  await pipeline(storage.read(backup.storage_key), counter(), digest.stream, new Writable({ write: (_c, _e, done) => done() }));
  if (digest.result().sha256 !== backup.sha256)
    throw new RestoreRefused('checksum_mismatch', 'The archive does not match its SHA-256: it is damaged and was not restored.');
  await rm(staging, { recursive: true, force: true });
  // Berth's own archive, its checksum verified: no byte or ratio limit (a site may hold sparse files).
  const archive = storage.read(backup.storage_key);
  const counted = counter();
  archive.on('error', (err) => counted.destroy(err));
  await unpackArchive({ stream: archive.pipe(counted) }, 'tar.gz', staging, {
    bytes: Number.MAX_SAFE_INTEGER,
    ratio: Number.POSITIVE_INFINITY,
  });
}

/**
 * The `backup.restore` job: checks the archive against its SHA-256, unpacks it (with the same
 * checks as a deployment), then hands each part that `include` names its share of the archive,
 * in the order of `parts` (zones before the mail and sites that live on them). Running it again
 * gives the same result (a retry after a crash).
 */
export function restoreJobs(deps: ServiceDeps, storage: BackupStorage, parts: readonly BackupPart[]) {
  const { db, config } = deps;

  return async function restore(operationId: string, include: BackupPartName[]): Promise<void> {
    const op = await ops.findOperationById(db, operationId);
    if (!op || !['queued', 'running'].includes(op.status)) return;
    const backup = await repo.findBackupById(db, op.resource_id);
    const progress = (percent: number) => ops.transition(db, op.id, ['running'], { status: 'running', progress: percent });
    await ops.transition(db, op.id, ['queued', 'running'], { status: 'running', progress: 5 });
    const staging = path.join(config.dataDir, 'staging', `restore-${op.id}`);
    let failure: unknown = null;
    try {
      if (!backup || backup.status !== 'completed')
        throw new RestoreRefused('invalid_state', 'The backup is no longer available.');
      // Progress: the archive is read twice (checksum, then unpacking), 5-80 % by bytes read; the
      // parts that follow take the rest in equal steps.
      const read = byteProgress({
        total: 2 * (backup.size_bytes ?? 0),
        from: 5,
        to: 80,
        report: (percent) => void progress(percent).catch(() => undefined),
      });
      await unpackBackup(storage, backup, staging, read.counter);
      const manifest = JSON.parse(await readFile(path.join(staging, 'manifest.json'), 'utf8')) as Record<string, unknown>;
      const chosen = parts.filter((p) => include.includes(p.name));
      for (const [i, part] of chosen.entries()) {
        await progress(80 + Math.floor((20 * i) / chosen.length));
        await part.restore(backup.account_id, manifest, staging);
      }
    } catch (err) {
      failure = err;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    await db.transaction(async (tx) => {
      const error =
        failure === null
          ? null
          : {
              code: failure instanceof RestoreRefused ? failure.code : 'restore_failed',
              detail: failure instanceof Error ? publicMessage(failure) : 'unknown error',
            };
      if (!(await ops.transition(tx, op.id, ['running'], { status: error ? 'failed' : 'succeeded', progress: 100, error })))
        return;
      if (backup) await backupEvent(tx, error ? 'backup.restore.failed' : 'backup.restore.completed', backup);
    });
  };
}
