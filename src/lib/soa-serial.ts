/**
 * SOA serials in the `YYYYMMDDnn` convention: the first change of a day starts at nn = 00,
 * later ones count up, and past 99 (or if the clock goes back) the serial simply grows by one.
 * Serials therefore always increase, which RFC 1982 arithmetic requires of secondaries'
 * comparisons as long as each step is below 2^31 — a date step is far below.
 */
export function nextSerial(current: number | null, now: Date): number {
  const d = now.getUTCFullYear() * 10000 + (now.getUTCMonth() + 1) * 100 + now.getUTCDate();
  const firstOfToday = d * 100;
  if (current === null || current < firstOfToday) return firstOfToday;
  return current + 1;
}

/** RFC 1982 §3.2: is `a` newer than `b` in 32-bit serial number arithmetic? */
export function serialGreater(a: number, b: number): boolean {
  const HALF = 2 ** 31;
  return (a < b && b - a > HALF) || (a > b && a - b < HALF);
}
