import { readFile } from 'node:fs/promises';

/**
 * When process `pid` started (field 22 of its /proc stat, in clock ticks since boot), so that a
 * pid used again is told apart; null once it is gone. The fields are counted after the
 * command's closing parenthesis: a command's name may hold spaces.
 */
export async function processStart(pid: number | string): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat === null ? null : (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null);
}
