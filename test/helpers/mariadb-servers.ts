import { execFile, spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { alive, readEnv } from './daemon-files.js';
import { installed } from './installed.js';

const scripts = path.resolve(import.meta.dirname, '../../scripts/daemons');

/** A MariaDB server's settings as scripts/daemons/db-up.sh writes them (db.env). */
export type MariadbEnv = Record<string, string>;

/**
 * Why a test cannot start MariaDB servers of its own here, or null when it can: db-up.sh runs
 * `mariadbd` as root, as a hosting server's agent does.
 */
export function noMariadbServers(): string | null {
  if (process.getuid?.() !== 0) return 'MariaDB servers of its own need root';
  if (!installed('mariadbd') || !installed('mariadb-install-db')) return 'mariadbd is not installed';
  return null;
}

/** One of scripts/daemons, to its exit. */
export const daemonScript = (script: string, args: string[]) =>
  new Promise<number | null>((resolve) =>
    // The daemon it starts keeps its output descriptors: no pipes, whose end would never come.
    spawn(path.join(scripts, script), args, { stdio: 'ignore' }).on('exit', (code) => resolve(code)),
  );

/** db-up.sh's exit when its port was taken meanwhile. */
const PORT_TAKEN = 75;

/** A MariaDB of its own on `address:port` (a port, or a way to choose a free one, again where it was taken), its data in `dir` (db-up.sh); stopped by `stopDaemons(dir)`. */
export async function startMariadb(dir: string, address: string, port: number | (() => Promise<number>)): Promise<MariadbEnv> {
  let code = await daemonScript('db-up.sh', [dir, address, String(typeof port === 'number' ? port : await port())]);
  // A free port chosen, then taken by another process before MariaDB listened on it: another one.
  for (let tries = 1; code === PORT_TAKEN && typeof port !== 'number' && tries < 5; tries++) {
    await rm(path.join(dir, 'mariadb'), { recursive: true, force: true });
    code = await daemonScript('db-up.sh', [dir, address, String(await port())]);
  }
  if (code !== 0) {
    // The directory goes with the test's: what MariaDB said is kept in the error.
    // The install's cause comes first, before its advice; a server's last words come last.
    const lines = async (name: string, from: 'start' | 'end') => {
      const all = (await readFile(path.join(dir, 'mariadb', name), 'utf8').catch(() => '(none)')).split('\n');
      return `${name}:\n${(from === 'start' ? all.slice(0, 15) : all.slice(-15)).join('\n')}`;
    };
    throw new Error(
      `db-up.sh exited with ${code} on ${address}\n${await lines('db-up.log', 'end')}\n${await lines('install.log', 'start')}\n${await lines('error.log', 'end')}`,
    );
  }
  return readEnv(path.join(dir, 'db.env'));
}

/**
 * Stops what scripts/daemons started in `dir` (down.sh), and waits for its MariaDB to exit: down.sh
 * only signals it, and it writes into `dir` until it is gone.
 */
export async function stopDaemons(dir: string): Promise<void> {
  const pid = Number(await readFile(path.join(dir, 'mariadb', 'mariadb.pid'), 'utf8').catch(() => ''));
  await daemonScript('down.sh', [dir]);
  for (const until = Date.now() + 60_000; pid > 0 && alive(pid) && Date.now() < until;)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * A statement run by the `mariadb` client at a server's MariaDB, its rows as tab-separated lines:
 * as `as` in its database, else as Berth's administrative account.
 */
export function mariadbSql(
  server: MariadbEnv,
  statement: string,
  as?: { user: string; password: string; database: string },
): Promise<string> {
  const admin = new URL(server.BERTH_MARIADB_URL as string);
  const [host, port] = (server.BERTH_IT_MARIADB as string).split(':') as [string, string];
  const user = as?.user ?? decodeURIComponent(admin.username);
  const args = ['--no-defaults', `--host=${host}`, `--port=${port}`, `--user=${user}`, '-N', '-B', '-e', statement];
  return new Promise((resolve, reject) =>
    execFile(
      'mariadb',
      as ? [...args, as.database] : args,
      { env: { PATH: process.env.PATH, MYSQL_PWD: as?.password ?? decodeURIComponent(admin.password) }, timeout: 30_000 },
      (err, out, stderr) => (err ? reject(new Error(String(stderr))) : resolve(String(out))),
    ),
  );
}
