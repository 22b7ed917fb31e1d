import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PgListener } from '../../src/db/pg-listener.js';
import { eventually } from '../helpers/app.js';

const url = process.env.TEST_DATABASE_URL;

/** The LISTEN session shared by every waiter of a process, against a real PostgreSQL. */
describe.skipIf(!url)(`the LISTEN session (${url ? 'PostgreSQL' : 'skipped: needs TEST_DATABASE_URL'})`, () => {
  const listener = new PgListener({ connectionString: url });
  const notifier = new pg.Client({ connectionString: url });
  const channel = `berth_test_${process.pid}`;
  afterAll(async () => {
    await notifier.end().catch(() => undefined);
  });

  it('delivers to every handler of a channel, to the ones left after one goes, and again after the last went and one came back', async () => {
    await notifier.connect();
    const got: string[] = [];
    const notify = (payload: string) => notifier.query('SELECT pg_notify($1, $2)', [channel, payload]);
    const first = await listener.listen(channel, (p) => got.push(`first:${p}`));
    const second = await listener.listen(channel, (p) => got.push(`second:${p}`));
    await notify('a');
    await eventually(async () => got.length === 2);
    expect(got.sort()).toEqual(['first:a', 'second:a']);
    await first();
    await notify('b');
    await eventually(async () => got.includes('second:b'));
    expect(got).not.toContain('first:b');
    await second();
    const third = await listener.listen(channel, (p) => got.push(`third:${p}`));
    await notify('c');
    await eventually(async () => got.includes('third:c'));
    await third();
  });
});
