import { resourceRoutes } from '../../../http/crud.js';
import type { App } from '../../../http/routes.js';
import { CreateSchedule, ScheduleListQuery, ScheduleMutable } from './schemas.js';
import type { SchedulesService } from './service.js';

export function backupScheduleRoutes(app: App, svc: SchedulesService): void {
  resourceRoutes(app, {
    path: '/v1/backup-schedules',
    prefix: 'bks',
    tags: ['backups'],
    resource: 'BackupSchedule',
    area: 'backups',
    load: svc.load,
    list: {
      operationId: 'listBackupSchedules',
      summary: 'List backup schedules',
      querystring: ScheduleListQuery,
      list: svc.list,
    },
    create: {
      operationId: 'createBackupSchedule',
      summary: 'Create a backup schedule',
      description:
        'Backs the account up at each slot of `cron` in `timezone` (UTC by default), keeping the newest `retain` of its backups. An invalid cron expression or time zone is a 422 pointing at it.',
      body: CreateSchedule,
      response: 'BackupSchedule',
      create: svc.create,
    },
    get: {
      summary: 'Get a backup schedule',
      get: svc.get,
    },
    update: {
      noun: 'backup schedule',
      mutable: ScheduleMutable,
      update: svc.update,
    },
    remove: {
      operationId: 'deleteBackupSchedule',
      summary: 'Delete a backup schedule',
      description: 'No slot runs after it; the backups it made stay (and count against `max_backups`) until deleted.',
      remove: svc.remove,
    },
  });
}
