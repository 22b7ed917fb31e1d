import { AppError } from './errors.js';

/** Throws 412 when an If-Match was sent and the current version differs. */
export function checkVersion(expected: number | undefined, current: number): void {
  if (expected !== undefined && expected !== current) {
    throw new AppError('precondition_failed', `If-Match does not match the current ETag "${current}".`);
  }
}

/** The row changed between reading and writing it (a concurrent writer won). */
export const staleVersion = (): AppError =>
  new AppError('precondition_failed', 'The resource changed while it was being updated; read it again and retry.');
