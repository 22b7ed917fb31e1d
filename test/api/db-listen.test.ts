import pg from 'pg';
import { expect, it } from 'vitest';
import { eventually } from '../helpers/app.js';
import { freshDb, onPostgres } from '../helpers/db.js';

/** `Db.listen`, which wakes the job workers and the webhook relay of every process on commit. */

it('delivers a committed NOTIFY to the subscribers of its channel; not a rolled-back one, nor after unsubscribing', async () => {
  const { db, drop } = await freshDb();
  try {
    const got: string[] = [];
    const offA = await db.listen('berth_test_a', (p) => got.push(`a:${p}`));
    const offB = await db.listen('berth_test_b', (p) => got.push(`b:${p}`));
    await db.query(`SELECT pg_notify('berth_test_a', '1'), pg_notify('berth_test_b', '2')`);
    await eventually(async () => got.length === 2);
    await db
      .transaction(async (tx) => {
        await tx.query(`SELECT pg_notify('berth_test_a', 'rolled back')`);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await offA();
    await db.query(`SELECT pg_notify('berth_test_a', '3'), pg_notify('berth_test_b', '4')`);
    await eventually(async () => got.includes('b:4'));
    expect(got.sort()).toEqual(['a:1', 'b:2', 'b:4']);
    await offB();
  } finally {
    await db.close();
    await drop();
  }
});

it.skipIf(!onPostgres())(
  'PostgreSQL: one session listens on every channel, and listens again on each once it is cut',
  async () => {
    const { db, url, drop } = await freshDb();
    const admin = new pg.Client({ connectionString: url as string });
    await admin.connect();
    try {
      const listening = async () =>
        (
          await admin.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
          )
        ).rows;
      const got = new Set<string>();
      const offs = [
        await db.listen('berth_test_a', (p) => got.add(`a:${p}`)),
        await db.listen('berth_test_b', (p) => got.add(`b:${p}`)),
      ];
      const [session, ...more] = await listening();
      expect(more).toEqual([]);
      await admin.query('SELECT pg_terminate_backend($1)', [session?.pid]);
      // Made again about a second later: until then the notifications have nobody to reach.
      await eventually(async () => {
        await db.query(`SELECT pg_notify('berth_test_a', 'again'), pg_notify('berth_test_b', 'again')`);
        return got.has('a:again') && got.has('b:again');
      }, 15_000);
      for (const off of offs) await off();
      await eventually(async () => (await listening()).length === 0, 15_000);
    } finally {
      await admin.end();
      await db.close();
      await drop();
    }
  },
);
