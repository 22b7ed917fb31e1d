import { Type, type Static } from 'typebox';
import { Email, Id, Nullable, ResourceMeta, StringEnum, SyncFields, Timestamp } from '../../http/schemas.js';
import { CronCommand } from '../../provisioning/render/cron.js';

/** Cron jobs and their runs as the API shows and takes them: each shape declared once (validator, type, document). */

const Schedule = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    "Five fields (minute hour day-of-month month day-of-week) or `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`, in the server's time zone (`timezone`). `@reboot` and a sixth field (seconds) are refused; a schedule firing more often than the plan's `cron_min_interval_minutes` (counted across the hour and the day: `*/7` fires at :56 and again 4 minutes later, at :00) is a 422 `schedule_too_frequent`.",
  examples: ['*/15 * * * *'],
});
const Command = CronCommand;
const TimeoutS = Type.Integer({
  minimum: 1,
  maximum: 86400,
  format: 'int32',
  description:
    'A run still going after this many seconds gets SIGTERM (its whole process group), SIGKILL 5 s later: `timed_out`.',
});
const Overlap = StringEnum(['skip', 'allow'] as const, {
  description: '`skip`: a run due while the previous one still runs is recorded `skipped` and does not start.',
});
const Notify = Type.Object(
  {
    on: StringEnum(['never', 'failure', 'always'] as const),
    email: Type.Optional(Nullable(Email)),
  },
  {
    additionalProperties: false,
    description:
      "Mail the run's output tail to `email` (the account's contact address when absent) after each run, or after failed and timed-out ones.",
  },
);
const JobName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$' });

export const CronRun = Type.Object(
  {
    id: Id('crn'),
    cron_job_id: Id('cjb'),
    trigger: StringEnum(['schedule', 'manual'] as const),
    status: StringEnum(['running', 'succeeded', 'failed', 'timed_out', 'skipped'] as const),
    started_at: Timestamp,
    finished_at: Nullable(Timestamp),
    exit_code: Nullable(Type.Integer({ minimum: -1, maximum: 255, format: 'int32' })),
    output_tail: Type.String({
      maxLength: 70_000,
      description: 'The last 64 KiB of what it wrote (standard output and error together).',
    }),
    reason: Nullable(Type.String({ maxLength: 1000, description: 'Why it was skipped, or failed without an exit code.' })),
  },
  { $id: 'CronRun', description: 'One run of a cron job; the newest 100 of each job are kept.' },
);
export type CronRun = Static<typeof CronRun>;

export const CronJob = Type.Object(
  {
    id: Id('cjb'),
    account_id: Id('acc'),
    name: JobName,
    schedule: Schedule,
    timezone: Nullable(
      Type.String({
        maxLength: 64,
        description: "The time zone the account's web server runs the schedule in (null until its agent has reported it).",
      }),
    ),
    command: Command,
    timeout_s: TimeoutS,
    overlap: Overlap,
    enabled: Type.Boolean(),
    notify: Notify,
    next_run_at: Nullable(Timestamp),
    last_run: Nullable(Type.Ref('CronRun')),
    ...SyncFields("`in_sync` once the account's web server has written the job into its cron."),
    ...ResourceMeta,
  },
  {
    $id: 'CronJob',
    description: "A command the account's web server runs on a schedule as the account's Unix user, with a history of its runs.",
  },
);
export type CronJob = Static<typeof CronJob>;

const Mutable = {
  name: JobName,
  schedule: Schedule,
  command: Command,
  timeout_s: TimeoutS,
  overlap: Overlap,
  enabled: Type.Boolean(),
  notify: Notify,
};
export const CronJobMutable = Mutable;
export type CronJobPatch = Partial<Static<ReturnType<typeof Type.Object<typeof Mutable>>>>;

export const CreateCronJob = Type.Object(
  {
    name: JobName,
    schedule: Schedule,
    command: Command,
    timeout_s: Type.Optional(TimeoutS),
    overlap: Type.Optional(Overlap),
    enabled: Type.Optional(Type.Boolean()),
    notify: Type.Optional(Notify),
  },
  { additionalProperties: false },
);
export type CreateCronJob = Static<typeof CreateCronJob>;

export const CronJobParams = Type.Object({ account_id: Id('acc'), cron_job_id: Id('cjb') }, { additionalProperties: false });

export const cronSchemas = [CronRun, CronJob];
