import type { Readable } from 'node:stream';
import { requireWritable, type Caller } from '../../auth/caller.js';
import { BACKUP_PARTS, type BackupPartName } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import { conflict, invalid, rangeNotSatisfiable } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion } from '../../lib/if-match.js';
import { lockBelowLimit, notMoving, notMovingNow, writableAccount } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import { toOperation } from '../operations/index.js';
import { resourceReads } from '../reads.js';
import * as repo from './repo.js';
import { toBackup } from './representation.js';
import type { Backup, CreateBackup } from './schemas.js';
import type { BackupStorage } from './storage.js';

/** A byte range of a download (inclusive), or the whole archive. */
export interface Download {
  backup: Backup;
  size: number;
  range: { start: number; end: number } | null;
  body: Readable;
}

/** `bytes=a-b`, `bytes=a-`, `bytes=-n`; several ranges are answered whole (RFC 9110 allows it). */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null;
  const [first, last] = [m[1] as string, m[2] as string];
  if (first === '') {
    const n = Number(last);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/** Queues a backup and its operation in the caller's transaction (manual or scheduled). */
export async function enqueueBackup(
  { jobs }: ServiceDeps,
  tx: Queryable,
  account: { id: string; reseller_id: string | null },
  o: { trigger: 'manual' | 'schedule'; schedule_id: string | null; include?: BackupPartName[] },
) {
  const include = o.include ? BACKUP_PARTS.filter((p) => o.include?.includes(p)) : [...BACKUP_PARTS];
  const id = newId('bak');
  notMoving(await lockBelowLimit(tx, account.id, 'max_backups', repo.countRetained));
  const inserted = await repo.insertBackup(tx, {
    id,
    account_id: account.id,
    trigger: o.trigger,
    schedule_id: o.schedule_id,
    include,
    storage_key: id,
  });
  if (!inserted) throw conflict('invalid_state', 'A backup of this account is already queued or running.');
  const { row: op } = await ops.startOperation(tx, {
    type: 'backup.create',
    resourceType: 'backup',
    resourceId: id,
    accountId: account.id,
    resellerId: account.reseller_id,
  });
  await jobs.send(tx, JOBS.backupCreate, { operation_id: op.id });
  return { ...toBackup((await repo.findBackupById(tx, id)) as repo.BackupRow), operation: toOperation(op) };
}

export function backupsService(deps: ServiceDeps, storage: BackupStorage) {
  const { db } = deps;

  const reads = resourceReads(db, { noun: 'backup', find: repo.findBackup, list: repo.listBackups, show: toBackup });
  const { load } = reads;

  return {
    ...reads,

    /** 202 `queued` with a `backup.create` operation; one in progress per account; `max_backups`. */
    async create(caller: Caller, input: CreateBackup) {
      const account = await writableAccount(db, caller, input.account_id);
      return db.transaction((tx) =>
        enqueueBackup(deps, tx, account, { trigger: 'manual', schedule_id: null, include: input.include }),
      );
    },

    /**
     * 202 with a `backup.restore` operation; a repeated request while it runs returns the same
     * one. `include` (default: what the backup holds) must be a part of the backup.
     */
    async restore(caller: Caller, id: string, include?: BackupPartName[]) {
      const row = await load(caller, id);
      const account = await writableAccount(db, caller, row.account_id);
      if (row.status !== 'completed')
        throw conflict('invalid_state', `The backup is ${row.status}; only a completed backup can be restored.`);
      const parts = include ?? row.include;
      const missing = parts.map((p, i) => [p, i] as const).filter(([p]) => !row.include.includes(p));
      if (missing.length)
        throw invalid(
          missing.map(([p, i]) => ({ pointer: `/include/${i}`, code: 'not_in_backup', detail: `the backup holds no ${p}` })),
        );
      return db.transaction(async (tx) => {
        await notMovingNow(tx, account.id);
        const { row: op, created } = await ops.startOperation(tx, {
          type: 'backup.restore',
          resourceType: 'backup',
          resourceId: row.id,
          accountId: account.id,
          resellerId: account.reseller_id,
        });
        if (created) await deps.jobs.send(tx, JOBS.backupRestore, { operation_id: op.id, include: parts });
        return { ...toBackup(row), operation: toOperation(op) };
      });
    },

    /** Removes the backup and its archive; not while it is being made. */
    async remove(caller: Caller, id: string, expectedVersion?: number): Promise<void> {
      const row = await load(caller, id);
      requireWritable(caller);
      checkVersion(expectedVersion, row.version);
      if (row.status === 'queued' || row.status === 'running')
        throw conflict('invalid_state', 'The backup is still being made; wait for it to finish.');
      await db.transaction((tx) => repo.deleteBackup(tx, id));
      await storage.remove(row.storage_key);
    },

    async download(caller: Caller, id: string, rangeHeader: string | undefined): Promise<Download> {
      const row = await load(caller, id);
      const size = row.status === 'completed' ? await storage.size(row.storage_key) : null;
      if (size === null)
        throw conflict('invalid_state', `The backup is ${row.status}; only a completed backup can be downloaded.`);
      const range = parseRange(rangeHeader, size);
      if (range === 'unsatisfiable') throw rangeNotSatisfiable(size);
      return { backup: toBackup(row), size, range, body: storage.read(row.storage_key, range ?? undefined) };
    },
  };
}
export type BackupsService = ReturnType<typeof backupsService>;
