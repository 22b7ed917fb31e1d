import { Type } from 'typebox';
import { callerOf } from '../../../http/auth.js';
import { deleteRoute, getRoute, listRoute, reachOf, updateRoutes } from '../../../http/crud.js';
import { sendCreated, type App } from '../../../http/routes.js';
import { Id, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../../http/schemas.js';
import { BACKUP_PARTS } from '../../../contribution.js';
import type { SchedulesService } from './service.js';

const Cron = Type.String({
  minLength: 9,
  maxLength: 200,
  description: 'Five fields: minute hour day-of-month month day-of-week, in `timezone`.',
  examples: ['30 2 * * *'],
});
const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'An IANA time zone.', examples: ['Europe/Berlin'] });
const Include = Type.Array(StringEnum(BACKUP_PARTS), { minItems: 1, maxItems: BACKUP_PARTS.length, uniqueItems: true });
const Retain = Type.Integer({
  minimum: 1,
  maximum: 1000,
  format: 'int32',
  description:
    "Completed backups of this schedule kept; older ones expire (`backup.expired`) as a new one completes, or at once when `retain` is lowered. The plan's `max_backups` still applies.",
});

const Schedule = Type.Object(
  {
    id: Id('bks'),
    account_id: Id('acc'),
    cron: Type.String({ maxLength: 200 }),
    timezone: Type.String({ maxLength: 64 }),
    include: Include,
    retain: Retain,
    enabled: Type.Boolean(),
    next_run_at: Nullable(Timestamp),
    last_run_at: Nullable(Timestamp),
    last_error: Nullable(
      Type.String({ maxLength: 1000, description: 'Why the last slot started no backup (quota, one still running).' }),
    ),
    ...ResourceMeta,
  },
  {
    $id: 'BackupSchedule',
    description:
      'Backs up an account at each slot of a cron expression, once per slot however many server processes run. A slot missed while no process ran is run once when one starts; slots missed while disabled are not.',
  },
);

export function backupScheduleRoutes(app: App, svc: SchedulesService): void {
  const path = '/v1/backup-schedules';
  const tags = ['backups'];
  const reach = reachOf(svc.load);

  listRoute(app, {
    path,
    tags,
    operationId: 'listBackupSchedules',
    summary: 'List backup schedules',
    scope: 'backups:read',
    querystring: Type.Object({ ...PageQuery, account_id: Type.Optional(Id('acc')) }, { additionalProperties: false }),
    item: 'BackupSchedule',
    list: (caller, query, page) => svc.list(caller, query, page),
  });

  app.post(
    path,
    {
      config: { scope: 'backups:write' },
      schema: {
        tags,
        operationId: 'createBackupSchedule',
        summary: 'Create a backup schedule',
        description: 'An invalid cron expression or time zone is a 422 pointing at it.',
        body: Type.Object(
          {
            account_id: Id('acc'),
            cron: Cron,
            timezone: Type.Optional(Timezone),
            include: Type.Optional(Include),
            retain: Retain,
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('BackupSchedule') },
      },
    },
    async (req, reply) => sendCreated(reply, path, await svc.create(callerOf(req), req.body)),
  );

  getRoute(app, {
    path,
    prefix: 'bks',
    tags,
    resource: 'BackupSchedule',
    summary: 'Get a backup schedule',
    scope: 'backups:read',
    reach,
    get: svc.get,
  });

  updateRoutes(app, {
    path,
    prefix: 'bks',
    tags,
    resource: 'BackupSchedule',
    noun: 'backup schedule',
    scope: 'backups:write',
    reach,
    mutable: { cron: Cron, timezone: Timezone, include: Include, retain: Retain, enabled: Type.Boolean() },
    update: (caller, id, patch, expected) => svc.update(caller, id, patch, expected),
  });

  deleteRoute(app, {
    path,
    prefix: 'bks',
    tags,
    operationId: 'deleteBackupSchedule',
    summary: 'Delete a backup schedule',
    description: 'Its backups stay.',
    scope: 'backups:write',
    reach,
    remove: (caller, id, expected) => svc.remove(caller, id, expected),
  });
}

export const backupScheduleSchemas = [Schedule];
