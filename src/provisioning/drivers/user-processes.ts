import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCommand } from '../../lib/run-command.js';

/** How long the processes signalled are waited for before the apply fails (and is tried again). */
const GONE_WITHIN_MS = 10_000;

/**
 * Ends every process of the Unix user `user` but its PHP-FPM workers (the pool's master keeps
 * them, and nginx waits for their requests: nginx-reload.ts): its SSH and SFTP sessions, and what
 * they left running (`nohup`, `screen`). SIGKILL, then a wait until each is gone. Refuses root
 * and this process's own user.
 */
export async function endUserProcesses(user: string): Promise<void> {
  const uid = Number((await runCommand('id', ['-u', user], 'id -u')).trim());
  if (!Number.isInteger(uid) || uid === 0 || uid === process.getuid?.())
    throw new Error(`refusing to end the processes of ${user}`);
  const victims: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    // The real, effective, saved and file-system uids: any of them the user's.
    const uids = /^Uid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/).map(Number) ?? [];
    const name = /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '';
    if (!uids.includes(uid) || name.startsWith('php-fpm')) continue;
    const started = await startTime(pid);
    try {
      process.kill(Number(pid), 'SIGKILL');
      if (started) victims.push(`${pid}@${started}`);
    } catch {
      // gone already
    }
  }
  const deadline = Date.now() + GONE_WITHIN_MS;
  for (;;) {
    const left = await Promise.all(
      victims.map(async (v) => `${v.split('@')[0]}@${await startTime(v.split('@')[0] as string)}` === v),
    );
    if (!left.includes(true)) return;
    if (Date.now() > deadline) throw new Error(`processes of ${user} outlived SIGKILL for ${GONE_WITHIN_MS / 1000} s`);
    await sleep(10);
  }
}

/** Field 22 of its stat, counted after the command's closing parenthesis (a name may hold spaces); null once it is gone. */
async function startTime(pid: string): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat === null ? null : (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null);
}
