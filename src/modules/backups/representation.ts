import type { Queryable } from '../../db/client.js';
import { publishResourceEvent } from '../publishing/index.js';
import type { BackupRow } from './repo.js';
import type { Backup } from './schemas.js';

export const toBackup = (r: BackupRow): Backup => ({
  id: r.id,
  account_id: r.account_id,
  trigger: r.trigger,
  schedule_id: r.schedule_id,
  include: r.include,
  status: r.status,
  size_bytes: r.size_bytes,
  sha256: r.sha256,
  contents: r.contents,
  error: r.error,
  started_at: r.started_at,
  completed_at: r.completed_at,
  expires_at: r.expires_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

export const backupEvent = (tx: Queryable, type: string, r: BackupRow) =>
  publishResourceEvent(tx, type, 'backup', r, toBackup(r));
