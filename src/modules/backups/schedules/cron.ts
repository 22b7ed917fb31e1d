import { Cron } from 'croner';
import type { FieldError } from '../../../lib/errors.js';
import { isTimeZone } from '../../../lib/time-zone.js';

/** Field errors of a 5-field cron expression and an IANA time zone. */
export function scheduleErrors(cron: string | undefined, timezone: string | undefined): FieldError[] {
  const errors: FieldError[] = [];
  if (timezone !== undefined && !isTimeZone(timezone))
    errors.push({ pointer: '/timezone', code: 'invalid_value', detail: 'must be an IANA time zone such as Europe/Berlin' });
  if (cron !== undefined) {
    if (cron.trim().split(/\s+/).length !== 5) {
      errors.push({ pointer: '/cron', code: 'invalid_format', detail: 'must have 5 fields: minute hour day month weekday' });
    } else {
      try {
        new Cron(cron, { paused: true });
      } catch (err) {
        errors.push({ pointer: '/cron', code: 'invalid_format', detail: (err as Error).message });
      }
    }
  }
  return errors;
}

/** The first slot of the schedule strictly after `after`, in its time zone. */
export function nextSlot(cron: string, timezone: string, after: Date): Date | null {
  return new Cron(cron, { timezone, paused: true }).nextRun(after);
}
