import { afterEach, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.js';
import { QUEUE_NAMES } from '../../src/jobs/names.js';
import { PgBossQueue } from '../../src/jobs/queue.js';
import { createTestApp, eventually } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';

/**
 * When jobs run. The fallback to NOTIFY: once per polling interval the process asks which of its
 * queues have due jobs and wakes their workers, instead of every worker fetching on its own. A
 * failed job's retry, after the delay the queue was given (BERTH_JOB_RETRY_S). And a job still
 * running when its process stops.
 */
const POLL_S = 0.5;
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** A queue with workers on two queues (three on one), on a database whose statements are counted. */
async function started() {
  const fresh = await freshDb();
  const statements: string[] = [];
  const db: Db = Object.assign(Object.create(fresh.db) as Db, {
    query: (text: string, params?: unknown[]) => (statements.push(text), fresh.db.query(text, params)),
    exec: (text: string) => (statements.push(text), fresh.db.exec(text)),
  });
  const queue = new PgBossQueue(db, { runWorkers: true, pollingIntervalSeconds: POLL_S, onError: () => undefined });
  const ran: string[] = [];
  await queue.start();
  await queue.work('backup.create', async (data) => void ran.push(String(data.n)), { concurrency: 3 });
  await queue.work('housekeeping', async () => undefined);
  cleanup.push(async () => {
    await queue.stop();
    await fresh.db.close();
    await fresh.drop();
  });
  return { queue, db, ran, statements };
}

it('a job that comes due later runs by the due scan, without a NOTIFY or a worker polling', async () => {
  const { queue, db, ran } = await started();
  // Sent with a start in the future: `send` notifies nobody, and the workers poll once a minute.
  await queue.send(db, 'backup.create', { n: 'later' }, { startAfter: new Date(Date.now() + 1_000) });
  // Well within the workers' own minute.
  await eventually(async () => ran.includes('later') || undefined, 20_000);
}, 60_000);

it('an idle process asks once per interval, not once per worker', async () => {
  const { statements } = await started();
  const isScan = (s: string) => /FROM unnest\(\$1::text\[\]\) AS q\(name\)/.test(s);
  const isFetch = (s: string) => /FROM pgboss\.job/.test(s) && !isScan(s) && !/^\s*WITH lost/.test(s);
  // Each of the four workers fetches once as it starts: past those (however long a busy machine takes).
  await eventually(async () => statements.filter(isFetch).length >= 4 || undefined);
  const from = statements.length;
  await new Promise((r) => setTimeout(r, 3_000));
  const seen = statements.slice(from);
  // No worker asks of its own accord (they poll once a minute; once per interval each would be 24
  // in three seconds). One fetch may be a worker's first, late on a busy machine (seen in CI). The
  // process scans once an interval: six in three seconds, a few more if the wait is stretched.
  expect(seen.filter(isFetch).length).toBeLessThanOrEqual(1);
  expect(seen.filter(isScan).length).toBeGreaterThan(0);
  expect(seen.filter(isScan).length).toBeLessThanOrEqual(9);
}, 60_000);

it('a failed job waits the retry delay it was given, one to two times it, before it runs again', async () => {
  const fresh = await freshDb();
  const queue = new PgBossQueue(fresh.db, { runWorkers: true, retryDelaySeconds: 7, onError: () => undefined });
  cleanup.push(async () => {
    await queue.stop();
    await fresh.db.close();
    await fresh.drop();
  });
  await queue.start();
  await queue.work('housekeeping', async () => {
    throw new Error('failing on purpose');
  });
  await queue.send(fresh.db, 'housekeeping', {});
  // The handler fails as it starts: the retry's start, counted from the run's, is the wait.
  const retry = await eventually(async () => {
    const { rows } = await fresh.db.query<{ retry_delay: number; wait_s: number }>(
      `SELECT retry_delay, EXTRACT(EPOCH FROM start_after - started_on)::float AS wait_s
       FROM pgboss.job WHERE name = 'housekeeping' AND state = 'retry'`,
    );
    return rows[0];
  });
  expect(retry.retry_delay).toBe(7);
  expect(retry.wait_s).toBeGreaterThanOrEqual(7);
  expect(retry.wait_s).toBeLessThanOrEqual(15);
}, 60_000);

it("the app's queues take BERTH_JOB_RETRY_S", async () => {
  const t = await createTestApp({ env: { BERTH_JOB_RETRY_S: '9' } });
  cleanup.push(() => t.close());
  const { rows } = await t.db.query<{ retry_delay: number }>(
    'SELECT DISTINCT retry_delay FROM pgboss.queue WHERE name = ANY($1)',
    [QUEUE_NAMES],
  );
  expect(rows).toEqual([{ retry_delay: 9 }]);
}, 60_000);

it('a job still running when the queue has stopped waiting ends on a closed database: reported, never an unhandled rejection', async () => {
  const fresh = await freshDb();
  const errors: unknown[] = [];
  const queue = new PgBossQueue(fresh.db, { runWorkers: true, stopWaitMs: 100, onError: (err) => errors.push(err) });
  await queue.start();
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let running = false;
  await queue.work('housekeeping', async () => {
    running = true;
    await held;
  });
  await queue.send(fresh.db, 'housekeeping', {});
  await eventually(async () => running || undefined);
  await queue.stop();
  await fresh.db.close();
  // pg-boss records the job's end without waiting for it: on the closed database that fails.
  release();
  await eventually(async () => errors.length > 0 || undefined);
  await fresh.drop();
}, 60_000);
