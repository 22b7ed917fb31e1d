import { preconditionFailed, type AppError } from './errors.js';

/** Throws 412 when an If-Match was sent and the current version differs. */
export function checkVersion(expected: number | undefined, current: number): void {
  if (expected !== undefined && expected !== current) {
    throw preconditionFailed(`If-Match does not match the current ETag "${current}".`);
  }
}

/** The row changed between reading and writing it (a concurrent writer won). */
export const staleVersion = (): AppError =>
  preconditionFailed('The resource changed while it was being updated; read it again and retry.');
