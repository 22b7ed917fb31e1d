import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireDirLock, DirLockedError } from '../../src/db/lock.js';
import { emptyPostgresDb, onPostgres } from '../helpers/db.js';
import { freePort } from '../helpers/ports.js';
import { startServer as start, waitReady } from '../helpers/server-process.js';

/** The real entry points, as separate processes: start, bootstrap, lock, SIGTERM, CLI. */
const root = path.resolve(import.meta.dirname, '../..');
const tsx = path.join(root, 'node_modules/tsx/dist/cli.mjs');
const dirs: string[] = [];
const OPERATOR = 'process-test-operator-token-0123456789';
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'berth-proc-'));
  dirs.push(d);
  return d;
}

// In the slow suite's PGlite run only: these processes keep PGlite in their data directories
// whatever the run. Its PostgreSQL run has the test after this block.
describe.skipIf(onPostgres())('server process', () => {
  it('first start creates the data dir, prints a generated operator token once, and stops cleanly on SIGTERM', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const port = await freePort();
    const s = start(dataDir, port);
    await waitReady(port, s);
    const token = /berth_[0-9A-Za-z]{40}/.exec(s.output())?.[0];
    // The first thing to open and the first command to try.
    await expect
      .poll(() => s.output(), { timeout: 10_000 })
      .toContain(`Berth is serving http://127.0.0.1:${port} (API reference: http://127.0.0.1:${port}/docs)`);
    expect(s.output()).toContain(`curl -H "Authorization: Bearer ${token}" http://127.0.0.1:${port}/v1/me`);
    expect(token).toBeDefined();
    const me = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);

    // A second process on the same PGlite directory must refuse to start.
    const second = start(dataDir, await freePort());
    expect(await second.exited).toBe(1);
    expect(second.output()).toMatch(/already open in process \d+/);

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);

    // The next start on the same directory prints no new token.
    const againPort = await freePort();
    const again = start(dataDir, againPort);
    await waitReady(againPort, again);
    expect(again.output()).not.toMatch(/berth_[0-9A-Za-z]{40}/);
    const stillWorks = await fetch(`http://127.0.0.1:${againPort}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(stillWorks.status).toBe(200);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 120_000);

  it('SIGTERM closes idle keep-alive and half-sent connections at once and exits 0 well within 10 s', async () => {
    const port = await freePort();
    const s = start(tempDir(), port, { BERTH_BOOTSTRAP_TOKEN: OPERATOR });
    await waitReady(port, s);
    const kept = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => {
      kept.write(`GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${OPERATOR}\r\n\r\n`);
      kept.once('data', () => resolve());
    });
    const silent = connect(port, '127.0.0.1');
    const half = connect(port, '127.0.0.1', () => half.write('GET /v1/me HTTP/1.1\r\nHost: x\r\n'));
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    for (const socket of [kept, silent, half]) socket.destroy();
  }, 120_000);

  it('`npm start` passes SIGTERM to the server: nothing is left on the port', async () => {
    const port = await freePort();
    const npm = spawn('npm', ['start'], {
      cwd: root,
      env: { ...process.env, BERTH_DATA_DIR: tempDir(), BERTH_PORT: String(port), BERTH_LOG_LEVEL: 'warn', DATABASE_URL: '' },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => npm.on('exit', resolve));
    await waitReady(port, { exited });
    npm.kill('SIGTERM');
    await exited;
    await expect
      .poll(
        () =>
          fetch(`http://127.0.0.1:${port}/readyz`).then(
            () => 'up',
            () => 'down',
          ),
        { timeout: 10_000 },
      )
      .toBe('down');
  }, 120_000);

  it('a bad configuration value exits 1 with a clear message', async () => {
    const s = start(tempDir(), 0, { BERTH_PORT: 'http' });
    // The tests' wait for readiness gives up with the process's words, not after its 150 s.
    const waited = Date.now();
    await expect(waitReady(await freePort(), s)).rejects.toThrow(/exited \(\{"code":1\}\)[^]*BERTH_PORT must be a whole number/);
    expect(Date.now() - waited).toBeLessThan(60_000);
    expect(await s.exited).toBe(1);
  }, 180_000);
});

it.skipIf(!onPostgres())(
  'several server processes starting together on an empty PostgreSQL database all start',
  async () => {
    const empty = await emptyPostgresDb();
    try {
      const ports = [await freePort(), await freePort(), await freePort()];
      const servers = ports.map((port) => start(tempDir(), port, { DATABASE_URL: empty.url, BERTH_BOOTSTRAP_TOKEN: OPERATOR }));
      await Promise.all(ports.map((port, i) => waitReady(port, servers[i])));
      for (const s of servers) s.child.kill('SIGTERM');
      for (const s of servers) expect(await s.exited, s.output()).toBe(0);
    } finally {
      await empty.drop();
    }
  },
  180_000,
);

describe.skipIf(onPostgres())('berth CLI', () => {
  it('migrate and token create --operator work against the data dir', () => {
    const dataDir = tempDir();
    const env = { ...process.env, BERTH_DATA_DIR: dataDir, DATABASE_URL: '' };
    const cli = (args: string[], extra: Record<string, string> = {}) =>
      spawnSync(process.execPath, [tsx, path.join(root, 'src/cli/main.ts'), ...args], {
        env: { ...env, ...extra },
        encoding: 'utf8',
      });
    expect(cli(['migrate']).stdout).toMatch(/applied: 0001_foundation/);
    expect(cli(['migrate']).stdout).toMatch(/up to date/);
    const minted = cli(['token', 'create', '--operator', '--name', 'ci']);
    expect(minted.status).toBe(0);
    expect(minted.stdout.trim()).toMatch(/^berth_[0-9A-Za-z]{40}$/);
    expect(cli(['frobnicate']).status).toBe(2);
    // A server command's error is its message after `berth: `, exit 1 (a bad variable, a locked directory).
    const bad = cli(['migrate'], { BERTH_PORT: 'http' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^berth: .*BERTH_PORT must be a whole number/);
    const lock = acquireDirLock(path.join(dataDir, 'pglite'));
    try {
      const locked = cli(['migrate']);
      expect(locked.status).toBe(1);
      expect(locked.stderr).toMatch(/^berth: \S/);
      expect(locked.stderr).not.toMatch(/\n\s+at /);
    } finally {
      lock.release();
    }
  }, 120_000);

  it('openapi prints the document and leaves no data directory behind', () => {
    const dataDir = path.join(tempDir(), 'never-made');
    const r = spawnSync(process.execPath, [tsx, path.join(root, 'src/cli/main.ts'), 'openapi'], {
      env: { ...process.env, BERTH_DATA_DIR: dataDir, DATABASE_URL: '' },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).openapi).toMatch(/^3\.1/);
    expect(existsSync(dataDir)).toBe(false);
  }, 120_000);
});

describe.skipIf(onPostgres())('PGlite directory lock', () => {
  it('refuses a second holder and takes over a stale lock', () => {
    const dir = tempDir();
    const lock = acquireDirLock(dir);
    expect(() => acquireDirLock(dir)).toThrow(DirLockedError);
    lock.release();
    // A lock file left by a process that no longer exists is taken over.
    writeFileSync(path.join(dir, 'berth.lock'), '2147483646');
    const again = acquireDirLock(dir);
    again.release();
  });
});
