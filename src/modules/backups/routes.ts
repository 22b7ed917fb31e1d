import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { itemRoute, reachOf, resourceRoutes } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { IdParams } from '../../http/schemas.js';
import { BackupListQuery, CreateBackup, RestoreBody } from './schemas.js';
import type { BackupsService } from './service.js';

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

  resourceRoutes(app, {
    path,
    prefix: 'bak',
    tags,
    resource: 'Backup',
    area: 'backups',
    load: svc.load,
    list: {
      operationId: 'listBackups',
      summary: 'List backups',
      querystring: BackupListQuery,
      list: svc.list,
    },
    create: {
      operationId: 'createBackup',
      summary: 'Back up an account',
      description:
        "Archives the account's sites, mailboxes, zones and databases: 202 `queued` with a `backup.create` operation (with `progress`). One backup in progress per account (409 `invalid_state`); the plan's `max_backups` counts kept and running backups (403 `quota_exceeded`). Sites are taken as they are live when the backup runs, after the account's deployments still `pending` have gone live (a backup requested right after a deployment's 202 holds it; the wait is at most 2 minutes).",
      body: CreateBackup,
      response: 'BackupWithOperation',
      accepted: true,
      create: svc.create,
    },
    get: {
      summary: 'Get a backup',
      get: svc.get,
    },
    remove: {
      operationId: 'deleteBackup',
      summary: 'Delete a backup and its archive',
      description: 'The archive is removed from backup storage; 409 `invalid_state` while the backup is queued or running.',
      remove: svc.remove,
    },
  });

  itemRoute(app, {
    method: 'POST',
    path: `${path}/:backup_id/restore`,
    tags,
    operationId: 'restoreBackup',
    summary: 'Restore a backup',
    description:
      "Puts the account back as the backup holds it: 202 with a `backup.restore` operation. The archive is checked against its SHA-256 first (a damaged one fails with `checksum_mismatch` and changes nothing). Then, for what `include` names (default: all the backup holds): each zone's records are set to the backup's, mailboxes get their messages, password and settings back, each site's files go live as a new deployment; domains, mailboxes, forwarders and sites that no longer exist are created again. Running it again gives the same result. Emits `backup.restore.completed` or `backup.restore.failed`.",
    scope: 'backups:write',
    reach,
    params: IdParams('bak'),
    body: RestoreBody,
    response: 'BackupWithOperation',
    accepted: true,
    run: (caller, { backup_id }, body) => svc.restore(caller, backup_id, body?.include),
  });

  app.get(
    `${path}/:backup_id/download`,
    {
      config: { scope: 'backups:read', reach, produces: 'application/gzip' },
      schema: {
        tags,
        operationId: 'downloadBackup',
        'x-errors': ['range_not_satisfiable'],
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
