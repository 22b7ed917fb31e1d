import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * The real server (`src/server.ts`) as a process of its own. As in production (README): node
 * itself receives the signals. tsx's CLI wrapper relays a signal and SIGKILLs the server if it
 * does not confirm within 30 ms, which a loaded machine misses (exit 143 instead of a clean stop).
 */
export function startServer(
  dataDir: string,
  port: number,
  env: Record<string, string> = {},
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  return started([path.join(root, 'src/server.ts')], {
    ...process.env,
    BERTH_DATA_DIR: dataDir,
    BERTH_PORT: String(port),
    BERTH_LOG_LEVEL: 'warn',
    DATABASE_URL: '',
    ...env,
  });
}

/** node (with tsx) running `args`, its output kept. */
function started(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d) => (out += String(d)));
  child.stderr?.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/**
 * Waits for `/readyz` to answer. Given the process, stops as soon as it exits (a setting refused at
 * start) in place of waiting out the whole time, and shows its output, as it does when the time
 * is out.
 */
export async function waitReady(port: number, server?: { exited: Promise<unknown>; output?: () => string }): Promise<void> {
  let exit: unknown;
  void server?.exited.then((code) => (exit = { code }));
  // A first start (PGlite initdb, migrations) takes 20 s and more on a loaded 2-core machine.
  for (const started = Date.now(); Date.now() - started < 150_000;) {
    if (exit) throw new Error(`server exited (${JSON.stringify(exit)}) before it was ready:\n${server?.output?.() ?? ''}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not become ready within 150 s:\n${server?.output?.() ?? ''}`);
}

/** `berth agent ...` as a process of its own, with its data directory and nothing of this one's environment. */
export function startAgentProcess(
  args: string[],
  dataDir: string,
  env: Record<string, string> = {},
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  return started([path.join(root, 'src/cli/main.ts'), 'agent', ...args], {
    PATH: process.env.PATH ?? '',
    BERTH_DATA_DIR: dataDir,
    BERTH_LOG_LEVEL: 'warn',
    ...env,
  });
}
