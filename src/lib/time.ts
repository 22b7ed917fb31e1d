/** Injected wherever time matters, so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const iso = (d: Date | string | null | undefined): string | null =>
  d === null || d === undefined ? null : (d instanceof Date ? d : new Date(d)).toISOString();

export const isoRequired = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();
