import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ArchivedDir } from '../../archives/pack.js';
import type { BackupPart } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { findAccountById, toAccount } from '../accounts/index.js';
import type { BackupRow } from './repo.js';

/**
 * Writes the generated part of a backup into `staging`: each included part's files (zone files,
 * password hashes, database dumps) and `manifest.json` with the account and every resource as
 * the API returns it. Returns the account's directories to archive (sites' live releases, mail
 * domains' Maildirs) and the counts recorded as the backup's `contents`.
 */
export async function stageBackup(
  db: Queryable,
  parts: readonly BackupPart[],
  backup: BackupRow,
  staging: string,
): Promise<{ dirs: ArchivedDir[]; contents: Record<string, number> }> {
  const account = await findAccountById(db, backup.account_id);
  if (!account) throw new Error('the account no longer exists');
  await mkdir(staging, { recursive: true });
  const dirs: ArchivedDir[] = [];
  const contents: Record<string, number> = {};
  const manifest: Record<string, unknown> = {
    format: 'berth-backup/1',
    backup: { id: backup.id, account_id: backup.account_id, include: backup.include, created_at: backup.created_at },
    account: toAccount(account),
  };
  for (const part of parts.filter((p) => backup.include.includes(p.name))) {
    const staged = await part.stage(backup.account_id, staging);
    Object.assign(manifest, staged.manifest);
    Object.assign(contents, staged.contents);
    dirs.push(...staged.dirs);
  }
  await writeFile(path.join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return { dirs, contents };
}
