import { Cron } from 'croner';

/**
 * A cron job's schedule as Debian's cron reads a line of `/etc/cron.d`: five fields, or one of
 * the named ones. Parsed and expanded by croner (cron's rules: with both day fields restricted,
 * a day matching either fires); Berth refuses what cron accepts and a hosting plan must not:
 * `@reboot` (no run is tied to a boot), a sixth field (seconds), and a schedule that never
 * fires. `minimumIntervalMinutes` is the shortest time between two runs, counted over the
 * expanded minutes and hours, across the hour and the day (`*​/7` fires at :56 and again at
 * the next hour's :00, 4 minutes later: 7 minutes apart only within the hour).
 */
export interface Schedule {
  /** The five fields the schedule stands for (a named schedule expanded). */
  fields: string;
  /** Minutes of the day it fires at (0–1439), ascending. */
  minutesOfDay: number[];
  /** The days it fires on, as day numbers from 2024-01-01 over four years. */
  days: number[];
}

export class ScheduleRefused extends Error {
  readonly code = 'invalid_schedule';
}

const NAMED: Record<string, string> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
};

const MAX_LENGTH = 200;
const DAY_MINUTES = 1440;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Four years from a leap year's first day: every date comes (the 29th of February once), and next to each weekday. */
const FROM = Date.UTC(2024, 0, 1);
const DAYS_CHECKED = 4 * 366 + 7;

const refuse = (message: string): never => {
  throw new ScheduleRefused(message);
};

/** Every time `pattern` fires from `from` (inclusive) until `until`, in UTC. */
function runsBetween(pattern: string, from: number, until: number): number[] {
  // A fixed offset, not a time zone: croner computes those without Intl, a hundred times faster.
  const cron = new Cron(pattern, { utcOffset: 0, paused: true, legacyMode: true });
  const runs: number[] = [];
  for (let at = cron.nextRun(new Date(from - 1000)); at && at.getTime() < until; at = cron.nextRun(at)) runs.push(at.getTime());
  return runs;
}

export function parseSchedule(text: string): Schedule {
  if (text.length > MAX_LENGTH) refuse(`is longer than ${MAX_LENGTH} characters`);
  if (/[\u0000-\u001f\u007f]/.test(text)) refuse('holds a control character (a newline, a NUL)');
  const trimmed = text.trim();
  if (trimmed === '@reboot') refuse('@reboot is not offered: a job runs on its schedule or when asked');
  const named = trimmed.startsWith('@') ? (NAMED[trimmed] ?? refuse(`${trimmed} is not a schedule name`)) : trimmed;
  const parts = named.split(/\s+/);
  if (parts.length === 6) refuse('has six fields: seconds are not offered (five fields: minute hour day month weekday)');
  if (parts.length !== 5) refuse('needs five fields: minute hour day-of-month month day-of-week');
  const [minute, hour, dayOfMonth, month, dayOfWeek] = parts as [string, string, string, string, string];
  try {
    // The times of one day it fires at, and the days it fires on (at midnight, standing for the day).
    const minutesOfDay = runsBetween(`${minute} ${hour} * * *`, FROM, FROM + DAY_MS).map((t) => (t - FROM) / MINUTE_MS);
    const days = runsBetween(`0 0 ${dayOfMonth} ${month} ${dayOfWeek}`, FROM, FROM + DAYS_CHECKED * DAY_MS).map(
      (t) => (t - FROM) / DAY_MS,
    );
    if (days.length === 0) refuse('never fires (no such date)');
    return { fields: parts.join(' '), minutesOfDay, days };
  } catch (err) {
    if (err instanceof ScheduleRefused) throw err;
    return refuse(`is not a cron schedule: ${(err as Error).message}`);
  }
}

const shortestStep = (values: number[]) => {
  let shortest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < values.length; i++) shortest = Math.min(shortest, (values[i] as number) - (values[i - 1] as number));
  return shortest;
};

/** The shortest time between two runs, in minutes: within a day, and from a day's last run to the next firing day's first. */
export function minimumIntervalMinutes(s: Schedule): number {
  const first = s.minutesOfDay[0] as number;
  const last = s.minutesOfDay.at(-1) as number;
  return Math.min(shortestStep(s.minutesOfDay), shortestStep(s.days) * DAY_MINUTES - last + first);
}

/** When it fires next after `after`, in the time zone its server runs cron in. */
export function nextRun(s: Schedule, after: Date, timeZone: string): Date | null {
  return new Cron(s.fields, { timezone: timeZone, paused: true, legacyMode: true }).nextRun(after);
}
