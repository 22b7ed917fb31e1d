import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manyRows, type Db } from '../../src/db/client.js';
import { freshDb } from '../helpers/db.js';

describe('manyRows', () => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDb());
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  type Row = { id: number; name: string; even: boolean; none: null };
  const columns = ['id', 'name', 'even', 'none'] as const;
  const from = `FROM (SELECT n AS id, 'name "{' || n || E'}",\\\\\\n' AS name, n % 2 = 0 AS even, NULL::text AS none FROM generate_series(1, $1::int) AS n) s`;

  it('reads what query reads, as plain values, on this engine and in a transaction', async () => {
    const direct = (await db.query(`SELECT ${columns.join(', ')} ${from}`, [500])).rows;
    const sorted = (rows: { id: number }[]) => [...rows].sort((a, b) => a.id - b.id);
    expect(sorted(await manyRows<Row>(db, columns, from, [500]))).toEqual(direct);
    expect(sorted(await db.transaction((tx) => manyRows<Row>(tx, columns, from, [500])))).toEqual(direct);
    expect(direct[0]).toEqual({ id: 1, name: 'name "{1}",\\\n', even: false, none: null });
  });

  it('reads no rows as none', async () => {
    expect(await manyRows<Row>(db, columns, from, [0])).toEqual([]);
  });
});
