import { createServer } from 'node:net';

/**
 * Where ports are chosen: below the kernel's range of ephemeral ports (32768–60999 on Linux), so
 * that no process's outgoing connection takes one as its local end meanwhile (a server started
 * on it, or started again after a kill, then failed with EADDRINUSE), and above the fixed ports
 * of scripts/daemons (up to 18443).
 */
const FIRST = 20_000;
const COUNT = 10_000;

/** Whether a server can listen on `port` now. */
const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** A port nothing listens on now, for a server process a test starts (and may start again on it). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = FIRST + Math.floor(Math.random() * COUNT);
    if (await bindable(port)) return port;
  }
}
