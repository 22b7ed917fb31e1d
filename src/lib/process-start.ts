import { readFile } from 'node:fs/promises';

/**
 * A running process's name (its command as the kernel keeps it, cut to 15 characters) and when it
 * started (field 22 of its /proc stat, in clock ticks since boot), so that a pid used again is
 * told apart; null once it has exited (a zombie not yet reaped included). The fields are counted
 * after the name's closing parenthesis: a name may hold spaces and parentheses.
 */
export async function processStat(pid: number | string): Promise<{ name: string; started: string } | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  if (fields[0] === 'Z' || fields[19] === undefined) return null;
  return { name: stat.slice(stat.indexOf('(') + 1, close), started: fields[19] };
}

export async function processStart(pid: number | string): Promise<string | null> {
  return (await processStat(pid))?.started ?? null;
}
