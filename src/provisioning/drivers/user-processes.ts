import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { processStart } from '../../lib/process-start.js';
import { runCommand } from '../../lib/run-command.js';

/** How long the processes signalled are waited for before the apply fails (and is tried again). */
const GONE_WITHIN_MS = 10_000;

/** Whether the Unix user exists. */
export const userExists = (user: string) =>
  runCommand('id', ['-u', user], 'id').then(
    () => true,
    () => false,
  );

/** A PHP-FPM worker (Debian names the binary after its version: `php-fpm8.2`). */
export const isPhpFpm = (name: string) => name.startsWith('php-fpm');

/**
 * Ends the processes of the Unix user `user` that `keep` does not keep (by their name): SIGKILL,
 * then a wait until each is gone. A freeze for a move ends its SSH and SFTP sessions and what
 * they left running (`nohup`, `screen`), and its PHP-FPM workers' requests still running (the
 * pools start new workers when asked). Refuses root and this process's own user.
 */
export async function endUserProcesses(user: string, keep: (name: string) => boolean): Promise<void> {
  const uid = Number((await runCommand('id', ['-u', user], 'id -u')).trim());
  if (!Number.isInteger(uid) || uid === 0 || uid === process.getuid?.())
    throw new Error(`refusing to end the processes of ${user}`);
  const victims: { pid: string; started: string }[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    // The real, effective, saved and file-system uids: any of them the user's.
    const uids = /^Uid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/).map(Number) ?? [];
    const name = /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '';
    if (!uids.includes(uid) || keep(name)) continue;
    const started = await processStart(pid);
    try {
      process.kill(Number(pid), 'SIGKILL');
      if (started !== null) victims.push({ pid, started });
    } catch {
      // gone already
    }
  }
  const deadline = Date.now() + GONE_WITHIN_MS;
  for (;;) {
    const left = await Promise.all(victims.map(async (v) => (await processStart(v.pid)) === v.started));
    if (!left.includes(true)) return;
    if (Date.now() > deadline) throw new Error(`processes of ${user} outlived SIGKILL for ${GONE_WITHIN_MS / 1000} s`);
    await sleep(10);
  }
}
