import { readFileSync } from 'node:fs';

/** What scripts/daemons/* leave behind: a settings file (`NAME=value` lines) as an object. */
export const readEnv = (file: string): Record<string, string> =>
  Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

/** Whether the process of a daemon's pid file still runs. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
