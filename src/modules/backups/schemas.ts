import { Type, type Static } from 'typebox';
import { BACKUP_PARTS } from '../../contribution.js';
import { Failure, Id, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';

/** Backups as the API shows and takes them: each shape declared once (validator, type, document). */

export const Include = Type.Array(StringEnum(BACKUP_PARTS), {
  minItems: 1,
  maxItems: BACKUP_PARTS.length,
  uniqueItems: true,
  description:
    'What the archive holds: site files (live releases), mailboxes (Maildirs), DNS zones, databases (a consistent `mariadb-dump` of each, with its users and grants), cron jobs (their settings; runs are not kept), SSH access and public keys. Default: all.',
});
const Status = StringEnum(['queued', 'running', 'completed', 'failed', 'expired'] as const);
const Count = Type.Integer({ minimum: 0, maximum: 2147483647, format: 'int32' });

export const Backup = Type.Object(
  {
    id: Id('bak'),
    account_id: Id('acc'),
    trigger: StringEnum(['manual', 'schedule'] as const),
    schedule_id: Nullable(Id('bks')),
    include: Include,
    status: Status,
    size_bytes: Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' })),
    sha256: Nullable(Type.String({ pattern: '^[0-9a-f]{64}$', maxLength: 64, description: 'SHA-256 of the archive, hex.' })),
    contents: Nullable(
      Type.Record(Type.String({ maxLength: 50 }), Count, {
        description: 'Counts per kind: `sites`, `emails`, `email_forwarders`, `domains`, and `files` in the archive.',
      }),
    ),
    error: Nullable(Failure),
    started_at: Nullable(Timestamp),
    completed_at: Nullable(Timestamp),
    expires_at: Nullable(Timestamp),
    ...ResourceMeta,
  },
  {
    $id: 'Backup',
    description:
      'A tar.gz archive of an account on backup storage: `manifest.json` (every resource as the API returns it), `dns/<domain>.zone`, `sites/<site_id>/` (the live release) and `mail/<domain>/<email_id>/` (Maildirs). States: queued → running → completed | failed; completed → expired.',
  },
);
const BackupWithOperation = Type.Object(
  { ...Backup.properties, operation: Type.Ref('Operation') },
  { $id: 'BackupWithOperation' },
);

export type Backup = Static<typeof Backup>;

export const CreateBackup = Type.Object(
  { account_id: Id('acc'), include: Type.Optional(Include) },
  { additionalProperties: false },
);
export type CreateBackup = Static<typeof CreateBackup>;
export const RestoreBody = Type.Optional(Type.Object({ include: Type.Optional(Include) }, { additionalProperties: false }));

export const BackupListQuery = Type.Object(
  { ...PageQuery, account_id: Type.Optional(Id('acc')), status: Type.Optional(Status) },
  { additionalProperties: false },
);
export type BackupListQuery = Static<typeof BackupListQuery>;

export const backupSchemas = [Backup, BackupWithOperation];
