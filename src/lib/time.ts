/** Injected wherever time matters, so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * Timestamps leave the database as RFC 3339 UTC text with millisecond precision
 * (`2026-11-21T10:00:00.000Z`), the API's own format, so rows need no Date round trip.
 * Sessions run in UTC, where PostgreSQL prints `2026-11-21 10:00:00.123456+00`.
 */
export function pgTimestampToRfc3339(text: string): string {
  if (!/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00$/.test(text)) return new Date(text).toISOString();
  const frac = text.length > 22 ? (text.slice(20, -3) + '00').slice(0, 3) : '000';
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${frac}Z`;
}

/** Milliseconds since the epoch of an RFC 3339 timestamp. */
export const epochMs = (timestamp: string): number => Date.parse(timestamp);
