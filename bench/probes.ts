/** The bench server's own probes (bench/servers.ts), on its baseline port: memory and event-loop delay. */

/** fetch, tried once more: the server may have closed an idle keep-alive connection meanwhile. */
export const send = (url: string, init: RequestInit = {}) => fetch(url, init).catch(() => fetch(url, init));

/** The server's RSS and its peak since the last reset (the kernel's VmHWM); `reset` starts a new peak. */
export const memory = async (t: { baseline: number }, reset = false) =>
  (await (
    await send(`http://127.0.0.1:${t.baseline}/memory${reset ? '/reset' : ''}`, { method: reset ? 'POST' : 'GET' })
  ).json()) as { rss: number; peak: number };

/** The server's event-loop delay (ms) while fn runs, p99 and the longest: what any other request would have waited. */
export async function lagDuring(
  t: { baseline: number },
  fn: () => Promise<number>,
): Promise<{ ms: number; p99: number; max: number }> {
  await send(`http://127.0.0.1:${t.baseline}/lag/reset`, { method: 'POST' });
  const ms = await fn();
  const lag = (await (await send(`http://127.0.0.1:${t.baseline}/lag`)).json()) as { p99: number; max: number };
  return { ms, ...lag };
}
