import { minimumIntervalMinutes, parseSchedule, type Schedule, ScheduleRefused } from '../../lib/cron-schedule.js';
import { type FieldError } from '../../lib/errors.js';
import type { CronCommand } from '../../provisioning/render/cron.js';

/**
 * The schedule parsed, or its field error: unreadable, `@reboot`, seconds, never firing
 * (`invalid_format`), or firing more often than the plan allows (`schedule_too_frequent`).
 */
export function checkSchedule(text: string, minIntervalMinutes: number): { schedule?: Schedule; errors: FieldError[] } {
  let schedule: Schedule;
  try {
    schedule = parseSchedule(text);
  } catch (err) {
    if (!(err instanceof ScheduleRefused)) throw err;
    return { errors: [{ pointer: '/schedule', code: 'invalid_format', detail: err.message }] };
  }
  const interval = minimumIntervalMinutes(schedule);
  if (interval < minIntervalMinutes)
    return {
      errors: [
        {
          pointer: '/schedule',
          code: 'schedule_too_frequent',
          detail: `fires ${interval} minute(s) apart at its closest; the plan allows every ${minIntervalMinutes} minutes at most`,
        },
      ],
    };
  return { schedule, errors: [] };
}

/**
 * What the schema cannot say of a command: a shell line is one line. (NUL is refused in every
 * string of every request before it gets here: `invalid_character`.)
 */
export function commandErrors(command: CronCommand): FieldError[] {
  if ('shell' in command && /[\r\n]/.test(command.shell))
    return [{ pointer: '/command/shell', code: 'invalid_value', detail: 'is one line: no newline (use argv, or a script)' }];
  return [];
}
