import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

export interface DirLock {
  release(): void;
}

export class DirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `the embedded database in ${dir} is already open in process ${pid}; ` +
        'PGlite allows one process per data directory (use DATABASE_URL to share a PostgreSQL)',
    );
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Guards a PGlite directory: two processes writing one directory lose data, so the second
 * one must stop. A lock left by a dead process is taken over.
 */
export function acquireDirLock(dir: string): DirLock {
  const file = path.join(dir, 'berth.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DirLockedError(dir, pid);
      }
      if (pid === process.pid) throw new DirLockedError(dir, pid);
      unlinkSync(file);
    }
  }
  throw new Error(`could not lock ${dir}`);
}
