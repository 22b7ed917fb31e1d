import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { freshDb, onPostgres } from '../helpers/db.js';
import { createAccount, createPlan, world } from '../helpers/fixtures.js';

/** Following the event feed: `after` and `wait` (SPEC §20). */
let t: TestApp;
let url: string | null;
let drop: () => Promise<void>;
let planId: string;
beforeAll(async () => {
  const fresh = await freshDb();
  url = fresh.url;
  drop = fresh.drop;
  t = await createTestApp({ db: fresh.db });
  planId = (await createPlan(t)).id;
  await createAccount(t, planId);
});
afterAll(async () => {
  await t.close();
  await drop();
});

type Event = { id: string; type: string; resource: { id: string } };
const newest = async () => (await t.get('/v1/events?limit=1')).body.data[0] as Event;
const after = async (id: string, query = '') => (await t.get(`/v1/events?after=${id}${query}`)).body;

describe('the event feed, followed', () => {
  it('answers the events after one, oldest first, at most limit, and no cursor', async () => {
    const from = await newest();
    const accounts = [await createAccount(t, planId), await createAccount(t, planId), await createAccount(t, planId)];
    const first = await after(from.id, '&limit=2');
    expect(first.data.map((e: Event) => e.resource.id)).toEqual([accounts[0].id, accounts[1].id]);
    expect(first.next_cursor).toBeNull();
    const rest = await after(first.data[1].id);
    expect(rest.data.map((e: Event) => e.resource.id)).toEqual([accounts[2].id]);
    expect((await after(rest.data[0].id)).data).toEqual([]);
  });

  it('a wait is answered as soon as an event commits, well before it runs out', async () => {
    const from = await newest();
    const started = Date.now();
    const polled = after(from.id, '&wait=20');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const account = await createAccount(t, planId);
    const answer = await polled;
    expect(answer.data.map((e: Event) => e.resource.id)).toEqual([account.id]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a wait with nothing new answers an empty page when it runs out', async () => {
    const from = await newest();
    const started = Date.now();
    expect((await after(from.id, '&wait=1')).data).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('refuses an after that is no event the caller can see, and a cursor beside it', async () => {
    const w = await world(t);
    const operatorOnly = await newest();
    const unknown = await t.get(`/v1/events?after=${newId('evt')}`);
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0]).toMatchObject({ pointer: '/query/after', code: 'unknown_event' });
    const other = await t.get(`/v1/events?after=${operatorOnly.id}`, w.tokenB);
    expect(other.status).toBe(422);
    expect(other.body.errors[0]).toMatchObject({ code: 'unknown_event' });
    const page = await t.get('/v1/events?limit=1');
    const both = await t.get(`/v1/events?after=${operatorOnly.id}&cursor=${page.body.next_cursor}`);
    expect(both.status).toBe(422);
    expect(both.body.errors[0]).toMatchObject({ pointer: '/query/cursor', code: 'not_with_after' });
  });

  it.skipIf(!onPostgres())(
    'an event whose transaction commits late is answered, not passed over (PostgreSQL: a second connection)',
    async () => {
      const from = await newest();
      const late = new pg.Client({ connectionString: url as string });
      await late.connect();
      try {
        // Its id is made first (older), its transaction commits last.
        const lateId = newId('evt');
        await late.query('BEGIN');
        await late.query(
          `INSERT INTO events (id, type, resource_type, resource_id, resource_version, data)
           VALUES ($1, 'test.late', 'test', 'late', 1, '{}')`,
          [lateId],
        );
        const account = await createAccount(t, planId);
        // The account's event waits behind the open transaction: answering it now would pass the late one over.
        expect((await after(from.id)).data).toEqual([]);
        await late.query('COMMIT');
        const answered = (await after(from.id)).data.map((e: Event) => e.id);
        expect(answered).toHaveLength(2);
        expect(answered).toContain(lateId);
        expect((await after(from.id)).data.map((e: Event) => e.resource.id)).toContain(account.id);
      } finally {
        await late.end();
      }
    },
  );
});
