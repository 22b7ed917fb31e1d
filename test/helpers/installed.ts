import { execFileSync } from 'node:child_process';

/** Whether a program is on the PATH (`-h` exits non-zero where many are installed: only a missing binary counts). */
export function installed(bin: string): boolean {
  try {
    execFileSync(bin, ['-h'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
