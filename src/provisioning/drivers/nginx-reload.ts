import { access, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { daemonPid } from '../../lib/daemon-pid.js';
import { processStart } from '../../lib/process-start.js';

/**
 * `nginx -s reload` only signals the master: it returns before the master has read the new
 * configuration, and the old configuration's workers go on serving the requests they hold (a PHP
 * script still writing, a download) until those end. A reload here is done when the master has
 * started workers of the new configuration (failing after `timeoutMs`), and then, for up to
 * `drainMs`, when every process of the old one has exited too, so that nothing answers by it any
 * more. The wait is bounded and never fails: a worker of the old configuration stays as long as
 * any request it holds, a long download of any site on the server among them. A pid file whose
 * pid is gone or another program's fails the reload unsignalled (`nginx -s reload` would signal
 * that process). Where the pid file is not found, a reload is done when signalled, and so it is
 * where the kernel does not list a process's children.
 */
export async function reloadNginx(
  conf: string | null,
  signal: () => Promise<unknown>,
  { drainMs = 0, timeoutMs = 60_000, program = 'nginx' }: { drainMs?: number; timeoutMs?: number; program?: string } = {},
): Promise<void> {
  const master = await masterPid(conf, program);
  const before = master === null ? null : await childrenOf(master);
  await signal();
  if (master === null || before === null) return;
  const started = Date.now();
  for (;;) {
    const now = await childrenOf(master);
    // Stopped meanwhile: no workers will come.
    if (now === null || (await processStart(master)) === null)
      throw new Error('nginx is not running (its master exited during the reload)');
    if (now.some((p) => !before.includes(p))) {
      if (!now.some((p) => before.includes(p)) || Date.now() - started > drainMs) return;
    } else if (Date.now() - started > timeoutMs)
      throw new Error(`nginx did not start workers with the new configuration within ${timeoutMs / 1000} s`);
    await sleep(10);
  }
}

/** The master's pid: from the `pid` directive of the main configuration, else nginx's default path. */
async function masterPid(conf: string | null, program: string): Promise<number | null> {
  const text = await readFile(conf ?? '/etc/nginx/nginx.conf', 'utf8').catch(() => '');
  const file = /^\s*pid\s+([^;\s]+)\s*;/m.exec(text)?.[1] ?? '/run/nginx.pid';
  const found = await access(file).then(
    () => true,
    () => false,
  );
  return found ? daemonPid('nginx', file, program) : null;
}

/**
 * The master's processes (workers, cache manager and loader), each as pid and start time: a pid
 * used again is another process. Null where the kernel does not list children (no
 * CONFIG_PROC_CHILDREN) or the master is gone.
 */
async function childrenOf(master: number): Promise<string[] | null> {
  const list = await readFile(`/proc/${master}/task/${master}/children`, 'utf8').catch(() => null);
  if (list === null) return null;
  const pids = list.split(' ').filter(Boolean);
  const started = await Promise.all(
    pids.map(async (pid) => {
      const at = await processStart(pid);
      return at === null ? null : `${pid}@${at}`;
    }),
  );
  return started.filter((p): p is string => p !== null);
}
