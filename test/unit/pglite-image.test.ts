import { expect, test } from 'vitest';
import { openDb, pgliteImage } from '../../src/db/client.js';

test('a PGlite database opened from an image starts with its rows, and goes its own way after', async () => {
  const source = await openDb({ databaseUrl: null, dataDir: '', inMemory: true });
  await source.exec(`CREATE TABLE t (n int); INSERT INTO t VALUES (1), (2)`);
  const image = await pgliteImage(source);
  const copy = await openDb({ databaseUrl: null, dataDir: '', inMemory: true, image });
  try {
    await copy.query('INSERT INTO t VALUES (3)');
    await source.query('DELETE FROM t WHERE n = 1');
    expect((await copy.query<{ n: number }>('SELECT n FROM t ORDER BY n')).rows.map((r) => r.n)).toEqual([1, 2, 3]);
    expect((await source.query<{ n: number }>('SELECT n FROM t ORDER BY n')).rows.map((r) => r.n)).toEqual([2]);
    // The session settings every PGlite connection gets come with a copy too.
    expect((await copy.query<{ TimeZone: string }>('SHOW TIME ZONE')).rows[0]).toEqual({ TimeZone: 'UTC' });
  } finally {
    await copy.close();
    await source.close();
  }
});
