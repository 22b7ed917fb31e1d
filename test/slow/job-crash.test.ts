import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { PgBossQueue } from '../../src/jobs/queue.js';
import { emptyPostgresDb, onPostgres } from '../helpers/db.js';

/**
 * a job whose process is killed (SIGKILL, nothing cleaned up) is resumed by another
 * process, or by the restarted one, within 30 s — and never run twice at once. Real OS processes:
 * a child takes the job and holds it, the test kills it and watches who runs the job next.
 */
const root = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const QUEUE = 'backup.create';

/** Starts the holder; resolves once it holds a job (the job's data as it printed it). */
function holder(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test/helpers/job-holder.ts'), QUEUE], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const holding = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /holding (.*)\n/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', () => reject(new Error(`the holder exited before taking a job: ${out}`)));
  });
  return { child, holding, exited };
}

/** Sends one job, lets the holder take it, kills it, and times how long until `resumer` runs it. */
async function killAndResume(holderEnv: Record<string, string>, open: () => Promise<Db>, withDbOpen: boolean) {
  let db = await open();
  await migrate(db);
  const sender = new PgBossQueue(db, { runWorkers: false, onError: () => undefined });
  await sender.start();
  await sender.send(db, QUEUE, { operation_id: 'op_crash' });
  await sender.stop();
  if (!withDbOpen) await db.close();

  const h = holder(holderEnv);
  expect(await h.holding).toBe('{"operation_id":"op_crash"}');
  h.child.kill('SIGKILL');
  await h.exited;
  const killedAt = Date.now();

  if (!withDbOpen) db = await open();
  const runs: { data: Record<string, unknown>; at: number }[] = [];
  const resumer = new PgBossQueue(db, { runWorkers: true, onError: () => undefined });
  await resumer.work(QUEUE, async (data) => {
    runs.push({ data, at: Date.now() });
  });
  await resumer.start();
  try {
    await expect.poll(() => runs.length, { timeout: 60_000, interval: 100 }).toBe(1);
    const resumedAfter = (runs[0] as { at: number }).at - killedAt;
    console.log(`kill -9 → resumed: ${resumedAfter} ms`);
    expect(runs[0]?.data).toEqual({ operation_id: 'op_crash' });
    expect(resumedAfter).toBeLessThan(30_000);
    // pg-boss marks the job completed after the handler returns, in a statement of its own: wait
    // for that, then check that it was the only run.
    const states = async () =>
      (await db.query<{ state: string }>(`SELECT state FROM pgboss.job WHERE name = $1`, [QUEUE])).rows.map((r) => r.state);
    await expect.poll(states, { timeout: 30_000, interval: 100 }).toEqual(['completed']);
    expect(runs).toHaveLength(1);
  } finally {
    await resumer.stop();
    await db.close();
  }
}

// In the slow suite's PGlite run only (a data directory, or memory); its PostgreSQL run has the
// test after this block.
describe.skipIf(onPostgres())('a job whose process is killed', () => {
  it('is resumed within 30 s by the restarted process (PGlite data directory)', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-crash-'));
    dirs.push(dataDir);
    await killAndResume({ BERTH_DATA_DIR: dataDir, DATABASE_URL: '' }, () => openDb({ databaseUrl: null, dataDir }), false);
  }, 120_000);

  it('is not taken from a live process, however long it runs', async () => {
    const db = await openDb({ databaseUrl: null, dataDir: '', inMemory: true });
    await migrate(db);
    const jobs = new PgBossQueue(db, { runWorkers: true, onError: () => undefined });
    let release = () => undefined as void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    await jobs.work(QUEUE, async () => {
      runs++;
      await gate;
    });
    await jobs.start();
    try {
      await jobs.send(db, QUEUE, { operation_id: 'op_long' });
      await expect.poll(() => runs, { timeout: 30_000 }).toBe(1);
      // A witness: a job of a process that died the moment this one took its job. Once it is
      // handed back, so would this job have been, had its lease not been renewed.
      await db.query(
        `INSERT INTO pgboss.job (name, data, state, started_on)
         SELECT 'account.terminate', '{}', 'active', started_on FROM pgboss.job WHERE name = $1`,
        [QUEUE],
      );
      const witness = async () =>
        (await db.query<{ state: string }>(`SELECT state FROM pgboss.job WHERE name = 'account.terminate'`)).rows[0]?.state;
      await expect.poll(witness, { timeout: 60_000, interval: 200 }).toBe('retry');
      const active = await db.query<{ state: string }>(`SELECT state FROM pgboss.job WHERE name = $1`, [QUEUE]);
      expect(active.rows.map((r) => r.state)).toEqual(['active']);
      expect(runs).toBe(1);
    } finally {
      release();
      await jobs.stop();
      await db.close();
    }
  }, 120_000);
});

it.skipIf(!onPostgres())(
  'a job whose process is killed is resumed within 30 s by another process on the same PostgreSQL database',
  async () => {
    const empty = await emptyPostgresDb();
    try {
      await killAndResume({ DATABASE_URL: empty.url }, () => openDb({ databaseUrl: empty.url, dataDir: '' }), true);
    } finally {
      await empty.drop();
    }
  },
  120_000,
);
