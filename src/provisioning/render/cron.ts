import { type Static, Type } from 'typebox';
import { ACCOUNT_USERNAME_PATTERN } from '../../lib/account-username.js';
import { idPattern, isId } from '../../lib/ids.js';

/**
 * An account's cron jobs as its web server applies them: one file under `/etc/cron.d` whose
 * lines name only Berth's runner and a job's id, and one job file per job that the runner reads
 * (root's alone: the account's own PHP can neither read nor plant one).
 */
const JobId = Type.String({ pattern: idPattern('cjb') });
export const CronCommand = Type.Union(
  [
    Type.Object(
      {
        argv: Type.Array(Type.String({ maxLength: 4096 }), {
          minItems: 1,
          maxItems: 64,
          description: 'The program and its arguments, run without a shell (the program looked up in `PATH`).',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      { shell: Type.String({ minLength: 1, maxLength: 4096, description: 'One line for `/bin/sh -c` (no newline).' }) },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      "Run as the account's Unix user, never as root, in its login home (`HOME`, `<account>/home`: the site files are in `../sites`), with `USER` and a plain `PATH`. No NUL anywhere.",
  },
);
export type CronCommand = Static<typeof CronCommand>;

const CronJobSpec = Type.Object({
  id: JobId,
  /** Five fields as cron reads them (a named schedule expanded). */
  fields: Type.String({ pattern: '^[0-9A-Za-z*,/-]+( [0-9A-Za-z*,/-]+){4}$', maxLength: 200 }),
  command: CronCommand,
  timeout_s: Type.Integer({ minimum: 1, maximum: 86400 }),
  overlap: Type.Union([Type.Literal('skip'), Type.Literal('allow')]),
  enabled: Type.Boolean(),
});
type CronJobSpec = Static<typeof CronJobSpec>;

/** An account's cron unit as its web server is handed it (an agent's, or this process's drivers). */
export const CronUnitSpec = Type.Object({
  account_id: Type.String({ minLength: 1, maxLength: 100 }),
  username: Type.String({ pattern: ACCOUNT_USERNAME_PATTERN }),
  /** A suspended account's jobs have no line, and the runner refuses them. */
  suspended: Type.Boolean(),
  /** Frozen for a move (and suspended): applied once no run begun before it still runs. */
  frozen: Type.Optional(Type.Boolean()),
  jobs: Type.Array(CronJobSpec, { maxItems: 10_000 }),
});
export type CronUnitSpec = Static<typeof CronUnitSpec>;

/**
 * The unit with where it runs on that server: the Unix user the jobs run as (the account's,
 * which owns its files and runs its PHP) and its login home there (`HOME` and the working directory).
 */
export type CronAccountSpec = CronUnitSpec & { user: string; home: string };

/** A run as Berth's runner records it on the server and the control plane collects it. */
export const CronRunRecord = Type.Object(
  {
    id: Type.String({ pattern: idPattern('crn') }),
    job_id: JobId,
    trigger: Type.Union([Type.Literal('schedule'), Type.Literal('manual')]),
    status: Type.Union([
      Type.Literal('running'),
      Type.Literal('succeeded'),
      Type.Literal('failed'),
      Type.Literal('timed_out'),
      Type.Literal('skipped'),
    ]),
    started_at: Type.String({ maxLength: 40 }),
    finished_at: Type.Union([Type.String({ maxLength: 40 }), Type.Null()]),
    exit_code: Type.Union([Type.Integer({ minimum: -1, maximum: 255 }), Type.Null()]),
    output_tail: Type.String({ maxLength: 70_000 }),
    reason: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]),
  },
  { additionalProperties: false },
);
export type CronRunRecord = Static<typeof CronRunRecord>;

/** What the runner reads for one job: everything it needs, nothing from a cron line. */
export interface CronJobFile {
  id: string;
  account_id: string;
  user: string;
  home: string;
  suspended: boolean;
  /** Written by a move's freeze before it stops the runs it waited for (drainRuns): why they ended. */
  frozen?: true;
  command: CronCommand;
  timeout_s: number;
  overlap: 'skip' | 'allow';
}

/** The account's file under `/etc/cron.d`: cron reads names of letters, digits, `-` and `_` only (no dots). */
export const cronFileName = (username: string) => `berth-${username}`;

const RUNNER = /^\/[A-Za-z0-9._/-]+$/;
const FIELD = /^[0-9A-Za-z*,/-]+$/;

/**
 * The account's cron.d file: each enabled job's schedule, `root` (the runner drops to the
 * account's user), the runner and the job's id; a suspended account's file has no job line.
 * `MAILTO=""`: the runner records the output, cron mails nothing. Ends with a newline, which
 * cron requires of the last line.
 */
export function renderCronFile(spec: CronAccountSpec, runner: string): string {
  if (!RUNNER.test(runner)) throw new Error(`refusing an unsafe cron runner path: ${JSON.stringify(runner.slice(0, 100))}`);
  const lines = [
    `# Berth: the cron jobs of account ${spec.username}. Written by Berth; changes here are replaced.`,
    'SHELL=/bin/sh',
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    'MAILTO=""',
  ];
  if (!spec.suspended)
    for (const job of spec.jobs) {
      if (!job.enabled) continue;
      const fields = job.fields.split(' ');
      if (fields.length !== 5 || !fields.every((f) => FIELD.test(f)) || !isId('cjb', job.id))
        throw new Error(`refusing an unsafe cron line for job ${JSON.stringify(job.id.slice(0, 40))}`);
      lines.push(`${fields.join(' ')} root ${runner} ${job.id}`);
    }
  return `${lines.join('\n')}\n`;
}

/** The runner's file of one job. */
export const renderJobFile = (spec: CronAccountSpec, job: CronJobSpec): string =>
  `${JSON.stringify({
    id: job.id,
    account_id: spec.account_id,
    user: spec.user,
    home: spec.home,
    suspended: spec.suspended,
    frozen: spec.frozen || undefined,
    command: job.command,
    timeout_s: job.timeout_s,
    overlap: job.overlap,
  } satisfies CronJobFile)}\n`;
