import { afterAll, describe, expect, it, vi } from 'vitest';
import { freshDb } from '../helpers/db.js';

/** A transaction's statements sent at once, on the engine the suite runs on (PGlite, or PostgreSQL with TEST_DATABASE_URL). */
describe('a transaction', () => {
  const opened = freshDb();
  afterAll(async () => {
    const { db, drop } = await opened;
    await db.close();
    await drop();
  });

  it('runs statements sent at once one after another, in the order sent, without pg deprecating it', async () => {
    const { db } = await opened;
    const warned = vi.spyOn(process, 'emitWarning');
    try {
      const rows = await db.transaction(async (tx) => {
        await tx.query('CREATE TEMPORARY TABLE seen (n int, at timestamptz DEFAULT clock_timestamp())');
        await Promise.all([1, 2, 3].map((n) => tx.query('INSERT INTO seen (n) SELECT $1::int FROM pg_sleep(0.02)', [n])));
        return (await tx.query<{ n: number }>('SELECT n FROM seen ORDER BY at')).rows;
      });
      expect(rows.map((r) => r.n)).toEqual([1, 2, 3]);
      expect(warned.mock.calls.filter((c) => String(c[0]).includes('already executing a query'))).toEqual([]);
    } finally {
      warned.mockRestore();
    }
  });
});
