import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { deleteRoute, getRoute, listRoute, reachOf } from '../../http/crud.js';
import { sendAccepted, type App } from '../../http/routes.js';
import { Failure, Id, IdParams, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';
import { BACKUP_PARTS } from '../../contribution.js';
import type { BackupsService } from './service.js';

const Include = Type.Array(StringEnum(BACKUP_PARTS), {
  minItems: 1,
  maxItems: BACKUP_PARTS.length,
  uniqueItems: true,
  description:
    'What the archive holds: site files (live releases), mailboxes (Maildirs), DNS zones, databases (a consistent `mariadb-dump` of each, with its users and grants). Default: all.',
});
const Status = StringEnum(['queued', 'running', 'completed', 'failed', 'expired'] as const);
const Count = Type.Integer({ minimum: 0, maximum: 2147483647, format: 'int32' });

const Backup = Type.Object(
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

const ARCHIVE = { 'application/gzip': { schema: Type.String({ format: 'binary', maxLength: 2 ** 40 }) } };
const ARCHIVE_HEADERS = {
  'Repr-Digest': Type.String({
    maxLength: 100,
    description: "RFC 9530: `sha-256=:<base64>:` of the whole archive (also in the backup's `sha256`), to check a download.",
  }),
  ETag: Type.String({
    maxLength: 100,
    description: "The archive's SHA-256, quoted: the same value on every part of one archive.",
  }),
  'Accept-Ranges': Type.String({
    const: 'bytes',
    description: 'Byte ranges are served: a broken download resumes with `Range`.',
  }),
};

export function backupRoutes(app: App, svc: BackupsService): void {
  const path = '/v1/backups';
  const tags = ['backups'];
  const reach = reachOf(svc.load);

  listRoute(app, {
    path,
    tags,
    operationId: 'listBackups',
    summary: 'List backups',
    scope: 'backups:read',
    querystring: Type.Object(
      { ...PageQuery, account_id: Type.Optional(Id('acc')), status: Type.Optional(Status) },
      { additionalProperties: false },
    ),
    item: 'Backup',
    list: (caller, query, page) => svc.list(caller, query, page),
  });

  app.post(
    path,
    {
      config: { scope: 'backups:write' },
      schema: {
        tags,
        operationId: 'createBackup',
        summary: 'Back up an account',
        description:
          "202 `queued` with a `backup.create` operation (with `progress`). One backup in progress per account (409 `invalid_state`); the plan's `max_backups` counts kept and running backups (403 `quota_exceeded`). Sites are taken as they are live when the backup runs, after the account's deployments still `pending` have gone live (a backup requested right after a deployment's 202 holds it; the wait is at most 2 minutes).",
        body: Type.Object({ account_id: Id('acc'), include: Type.Optional(Include) }, { additionalProperties: false }),
        response: { 202: Type.Ref('BackupWithOperation') },
      },
    },
    async (req, reply) => sendAccepted(reply, await svc.create(callerOf(req), req.body)),
  );

  getRoute(app, {
    path,
    prefix: 'bak',
    tags,
    resource: 'Backup',
    summary: 'Get a backup',
    scope: 'backups:read',
    reach,
    get: svc.get,
  });

  app.post(
    `${path}/:backup_id/restore`,
    {
      config: { scope: 'backups:write', reach },
      schema: {
        tags,
        operationId: 'restoreBackup',
        summary: 'Restore a backup',
        description:
          "202 with a `backup.restore` operation. The archive is checked against its SHA-256 first (a damaged one fails with `checksum_mismatch` and changes nothing). Then, for what `include` names (default: all the backup holds): each zone's records are set to the backup's, mailboxes get their messages, password and settings back, each site's files go live as a new deployment; domains, mailboxes, forwarders and sites that no longer exist are created again. Running it again gives the same result. Emits `backup.restore.completed` or `backup.restore.failed`.",
        params: IdParams('bak'),
        body: Type.Optional(Type.Object({ include: Type.Optional(Include) }, { additionalProperties: false })),
        response: { 202: Type.Ref('BackupWithOperation') },
      },
    },
    async (req, reply) => sendAccepted(reply, await svc.restore(callerOf(req), req.params.backup_id, req.body?.include)),
  );

  deleteRoute(app, {
    path,
    prefix: 'bak',
    tags,
    operationId: 'deleteBackup',
    summary: 'Delete a backup and its archive',
    description: '409 while it is queued or running.',
    scope: 'backups:write',
    reach,
    remove: svc.remove,
  });

  app.get(
    `${path}/:backup_id/download`,
    {
      config: { scope: 'backups:read', reach, produces: 'application/gzip' },
      schema: {
        tags,
        operationId: 'downloadBackup',
        summary: 'Download the archive',
        description:
          'Streams the tar.gz. `Range: bytes=...` (one range) answers 206 with `Content-Range`; an unsatisfiable range 416. `Repr-Digest` (RFC 9530) carries the SHA-256 of the whole archive. 409 unless the backup is completed.',
        params: IdParams('bak'),
        headers: Type.Object({
          range: Type.Optional(
            Type.String({ maxLength: 200, description: 'One byte range (`bytes=1048576-`): resume a download that broke off.' }),
          ),
        }),
        response: {
          200: { description: 'The archive', headers: ARCHIVE_HEADERS, content: ARCHIVE },
          206: {
            description: 'Part of the archive',
            headers: {
              ...ARCHIVE_HEADERS,
              'Content-Range': Type.String({ maxLength: 100, description: '`bytes <first>-<last>/<size>`.' }),
            },
            content: ARCHIVE,
          },
        },
      },
    },
    async (req, reply) => {
      const d = await svc.download(callerOf(req), req.params.backup_id, req.headers.range);
      void reply
        .type('application/gzip')
        .header('accept-ranges', 'bytes')
        .header('content-disposition', `attachment; filename="${d.backup.id}.tar.gz"`)
        .header('repr-digest', `sha-256=:${Buffer.from(d.backup.sha256 ?? '', 'hex').toString('base64')}:`)
        .header('etag', `"${d.backup.sha256}"`);
      if (d.range) {
        void reply
          .code(206)
          .header('content-range', `bytes ${d.range.start}-${d.range.end}/${d.size}`)
          .header('content-length', String(d.range.end - d.range.start + 1));
      } else void reply.header('content-length', String(d.size));
      // The schema documents bytes (a string to the type provider); Fastify streams a Readable.
      return reply.send(d.body as unknown as string);
    },
  );
}

export const backupSchemas = [Backup, BackupWithOperation];
