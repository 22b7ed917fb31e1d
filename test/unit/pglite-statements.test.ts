import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PgliteStatements } from '../../src/db/pglite-statements.js';
import { pgTimestampToRfc3339 } from '../../src/lib/time.js';

let pg: PGlite;
beforeAll(async () => {
  pg = await PGlite.create({ parsers: { 1184: pgTimestampToRfc3339 } });
  await pg.exec(`CREATE TABLE t (id text PRIMARY KEY, n int, tags text[], doc jsonb, at timestamptz)`);
});
afterAll(() => pg.close());

const prepared = async () =>
  (await pg.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY statement')).rows.map(
    (r) => r.statement,
  );

it('parses a text once and answers as PGlite’s own query does, its parsers and serializers included', async () => {
  const statements = new PgliteStatements(pg);
  const insert = 'INSERT INTO t (id, n, tags, doc, at) VALUES ($1, $2, $3, $4, $5) RETURNING *';
  const at = new Date('2026-12-01T06:00:00.123Z');
  const first = await statements.query(insert, ['a', 1, ['x', 'y'], { k: [1] }, at]);
  await statements.query(insert, ['b', null, [], null, null]);
  const own = await pg.query("SELECT * FROM t WHERE id = 'a'");
  expect([first.rows, first.fields]).toEqual([own.rows, own.fields]);
  expect(first.rows).toEqual([{ id: 'a', n: 1, tags: ['x', 'y'], doc: { k: [1] }, at: '2026-12-01T06:00:00.123Z' }]);
  const update = await statements.query('UPDATE t SET n = coalesce(n, 0) + $1', [2]);
  expect(update.affectedRows).toBe(2);
  expect(await prepared()).toEqual([insert, 'UPDATE t SET n = coalesce(n, 0) + $1']);
});

it('outside a transaction waits for the one under way (here rolled back); inside it, runs in it; an error keeps its code', async () => {
  const statements = new PgliteStatements(pg);
  const count = 'SELECT count(*)::int AS n FROM t WHERE id = $1';
  let begun!: () => void;
  let release!: () => void;
  const started = new Promise<void>((resolve) => (begun = resolve));
  const held = new Promise<void>((resolve) => (release = resolve));
  const tx = pg.transaction(async (t) => {
    await statements.inTransaction('INSERT INTO t (id) VALUES ($1)', ['c'], () => t.query('unused'));
    expect((await statements.inTransaction(count, ['c'], () => t.query('unused'))).rows).toEqual([{ n: 1 }]);
    begun();
    await held;
    await t.rollback();
  });
  await started;
  const outside = statements.query<{ n: number }>(count, ['c']);
  release();
  await tx;
  expect((await outside).rows).toEqual([{ n: 0 }]);
  await statements.query('INSERT INTO t (id) VALUES ($1)', ['c']);
  await expect(statements.query('INSERT INTO t (id) VALUES ($1)', ['c'])).rejects.toMatchObject({ code: '23505' });
  expect((await statements.query(count, ['c'])).rows).toEqual([{ n: 1 }]);
});

it('keeps no name for a text that does not parse, and the session goes on', async () => {
  const statements = new PgliteStatements(pg);
  const before = await prepared();
  await expect(statements.query('SELEC $1', [1])).rejects.toMatchObject({ code: '42601' });
  expect(await prepared()).toEqual(before);
  expect((await statements.query('SELECT $1::int AS n', [4])).rows).toEqual([{ n: 4 }]);
});

it('past its limit, runs new texts unnamed', async () => {
  const statements = new PgliteStatements(pg, 1);
  await statements.query('SELECT $1::int + 1 AS n', [1]);
  const before = (await prepared()).length;
  expect((await statements.query('SELECT $1::int + 2 AS n', [1])).rows).toEqual([{ n: 3 }]);
  expect((await statements.query('SELECT $1::int + 1 AS n', [2])).rows).toEqual([{ n: 3 }]);
  expect((await prepared()).length).toBe(before);
});
