const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Waits before each retry: after the last, the endpoint is disabled. */
export const RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/**
 * When the next attempt is due after `failed` automatic attempts, with ±10 % jitter so
 * endpoints that failed together are not retried in one burst; null when none is left.
 */
export function nextAttemptAt(now: Date, failed: number, random: () => number = Math.random): Date | null {
  const delay = RETRY_DELAYS_MS[failed - 1];
  if (delay === undefined) return null;
  return new Date(now.getTime() + Math.round(delay * (0.9 + 0.2 * random())));
}
