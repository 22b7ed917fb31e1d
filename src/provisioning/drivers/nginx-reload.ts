import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { processStart } from '../../lib/process-start.js';

/**
 * `nginx -s reload` only signals the master: it returns before the master has read the new
 * configuration, and the old configuration's workers go on serving the requests they hold (a PHP
 * script still writing, a download) until those end. A reload here is done when the master has
 * started workers of the new configuration. With `drain`, it also waits until every process of
 * the old one has exited, so nothing answers by it any more: `must` fails once `timeoutMs` has
 * passed (a freeze for a move must not count while a request begun before it can still write),
 * `try` gives up after `tryMs` (the change after a freeze: a worker of the frozen
 * configuration only answers 503 and is gone at once, but one serving a long download from
 * before the freeze is harmless). Without the master's pid (its pid file not found) a reload is
 * done when signalled, as before, and so it is where the kernel does not list a process's children.
 */
export async function reloadNginx(
  conf: string | null,
  signal: () => Promise<unknown>,
  { drain = 'no', timeoutMs = 60_000, tryMs = 5000 }: { drain?: 'no' | 'try' | 'must'; timeoutMs?: number; tryMs?: number } = {},
): Promise<void> {
  const master = await masterPid(conf);
  const before = master === null ? null : await childrenOf(master);
  await signal();
  if (master === null || before === null) return;
  const started = Date.now();
  for (;;) {
    const now = (await childrenOf(master)) ?? [];
    const renewed = now.some((p) => !before.includes(p));
    const drained = !now.some((p) => before.includes(p));
    if (renewed && (drain === 'no' || drained)) return;
    if (renewed && drain === 'try' && Date.now() - started > tryMs) return;
    if (Date.now() - started > timeoutMs)
      throw new Error(
        renewed
          ? `nginx still serves requests begun before this change, ${timeoutMs / 1000} s after its reload`
          : `nginx did not start workers with the new configuration within ${timeoutMs / 1000} s`,
      );
    await sleep(10);
  }
}

/** The master's pid: from the `pid` directive of the main configuration, else nginx's default path. */
async function masterPid(conf: string | null): Promise<number | null> {
  const text = await readFile(conf ?? '/etc/nginx/nginx.conf', 'utf8').catch(() => '');
  const file = /^\s*pid\s+([^;\s]+)\s*;/m.exec(text)?.[1] ?? '/run/nginx.pid';
  const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  return Number.isInteger(pid) && pid > 0 ? pid : null;
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
