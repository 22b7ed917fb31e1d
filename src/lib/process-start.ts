import { readFile } from 'node:fs/promises';

/**
 * When process `pid` started (field 22 of its /proc stat, in clock ticks since boot), so that a
 * pid used again is told apart; null once it has exited (a zombie not yet reaped included). The
 * fields are counted after the command's closing parenthesis: a command's name may hold spaces.
 */
export async function processStart(pid: number | string): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return !fields || fields[0] === 'Z' ? null : (fields[19] ?? null);
}
