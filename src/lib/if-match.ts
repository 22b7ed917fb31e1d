import { AppError, preconditionFailed } from './errors.js';

/** Throws 412 when an If-Match was sent and the current version differs. */
export function checkVersion(expected: number | undefined, current: number): void {
  if (expected !== undefined && expected !== current) {
    throw preconditionFailed(`If-Match does not match the current ETag "${current}".`);
  }
}

/** The row changed between reading and writing it (a concurrent writer won). */
export const staleVersion = (): AppError =>
  preconditionFailed('The resource changed while it was being updated; read it again and retry.');

/**
 * A read-modify-write without If-Match asks for its change, not for a version: when a concurrent
 * writer (a background job marking the row) moved the row on between the read and the write, it
 * is read and written again, at most `attempts` times. With If-Match the 412 stands.
 */
export async function unlessConditional<T>(expected: number | undefined, write: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (expected !== undefined || attempt >= attempts || !(err instanceof AppError && err.code === 'precondition_failed'))
        throw err;
    }
  }
}
