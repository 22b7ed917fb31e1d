import { Type, type Static } from 'typebox';
import { Id, Nullable, PageQuery, ResourceMeta, Timestamp } from '../../../http/schemas.js';
import { Include } from '../schemas.js';

/** Backup schedules as the API shows and takes them: each shape declared once (validator, type, document). */

const Cron = Type.String({
  minLength: 9,
  maxLength: 200,
  description: 'Five fields: minute hour day-of-month month day-of-week, in `timezone`.',
  examples: ['30 2 * * *'],
});
const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'An IANA time zone.', examples: ['Europe/Berlin'] });
const Retain = Type.Integer({
  minimum: 1,
  maximum: 1000,
  format: 'int32',
  description:
    "Completed backups of this schedule kept; older ones expire (`backup.expired`) as a new one completes, or at once when `retain` is lowered. The plan's `max_backups` still applies.",
});

export const Schedule = Type.Object(
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

export type Schedule = Static<typeof Schedule>;

export const CreateSchedule = Type.Object(
  {
    account_id: Id('acc'),
    cron: Cron,
    timezone: Type.Optional(Timezone),
    include: Type.Optional(Include),
    retain: Retain,
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateSchedule = Static<typeof CreateSchedule>;
export const ScheduleMutable = { cron: Cron, timezone: Timezone, include: Include, retain: Retain, enabled: Type.Boolean() };
export type SchedulePatch = Partial<Static<ReturnType<typeof Type.Object<typeof ScheduleMutable>>>>;

export const ScheduleListQuery = Type.Object(
  { ...PageQuery, account_id: Type.Optional(Id('acc')) },
  { additionalProperties: false },
);
export type ScheduleListQuery = Static<typeof ScheduleListQuery>;

export const backupScheduleSchemas = [Schedule];
