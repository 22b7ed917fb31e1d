import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Writable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { unpackArchive } from '../../archives/unpack.js';
import { RestoreRefused, type BackupPart, type BackupPartName, type UnpackedUnder } from '../../contribution.js';
import { byteProgress } from '../../lib/byte-progress.js';
import { publicMessage } from '../../lib/errors.js';
import { removeTree } from '../../lib/remove-tree.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import * as repo from './repo.js';
import { backupEvent } from './representation.js';
import { digestingStream, type BackupStorage } from './storage.js';

/**
 * A completed backup's archive unpacked into `staging` (emptied first) and checked against its
 * SHA-256 in the same read: a damaged one is refused with `checksum_mismatch` before any part is
 * restored from it (the staging is the caller's to remove). `counter` counts the bytes read.
 * Returns what was unpacked under a directory.
 */
export async function unpackBackup(
  storage: BackupStorage,
  backup: repo.BackupRow,
  staging: string,
  counter: () => Transform = () => new PassThrough(),
): Promise<UnpackedUnder> {
  const damaged = () =>
    new RestoreRefused('checksum_mismatch', 'The archive does not match its SHA-256: it is damaged and was not restored.');
  await removeTree(staging);
  const digest = digestingStream();
  const archive = storage.read(backup.storage_key);
  const counted = counter();
  archive.on('error', (err) => counted.destroy(err));
  counted.on('error', (err) => digest.stream.destroy(err));
  const files: [string, number][] = [];
  try {
    // Berth's own archive, checked as it is read: no byte or ratio limit (a site may hold sparse files).
    await unpackArchive({ stream: archive.pipe(counted).pipe(digest.stream) }, 'tar.gz', staging, {
      bytes: Number.MAX_SAFE_INTEGER,
      ratio: Number.POSITIVE_INFINITY,
      onFile: (member, bytes) => files.push([member, bytes]),
    });
  } catch (err) {
    // Damage may stop the unpacking before the end of the archive: its checksum tells which it was.
    const whole = digestingStream();
    await pipeline(storage.read(backup.storage_key), whole.stream, new Writable({ write: (_c, _e, done) => done() }));
    if (whole.result().sha256 !== backup.sha256) throw damaged();
    throw err;
  }
  if (digest.result().sha256 !== backup.sha256) throw damaged();
  return (dir) => {
    const under = files.filter(([member]) => member.startsWith(`${dir}/`));
    return { files: under.length, bytes: under.reduce((n, [, bytes]) => n + bytes, 0) };
  };
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
      // Progress: the archive's bytes read (and checked), 5-80 %; the parts that follow take the
      // rest in equal steps.
      const read = byteProgress({
        total: backup.size_bytes ?? 0,
        from: 5,
        to: 80,
        report: (percent) => void progress(percent).catch(() => undefined),
      });
      const unpacked = await unpackBackup(storage, backup, staging, read.counter);
      const manifest = JSON.parse(await readFile(path.join(staging, 'manifest.json'), 'utf8')) as Record<string, unknown>;
      const chosen = parts.filter((p) => include.includes(p.name));
      for (const [i, part] of chosen.entries()) {
        await progress(80 + Math.floor((20 * i) / chosen.length));
        await part.restore(backup.account_id, manifest, staging, unpacked);
      }
    } catch (err) {
      failure = err;
    } finally {
      await removeTree(staging);
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
