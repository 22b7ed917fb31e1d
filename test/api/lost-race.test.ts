import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/db.js';

/**
 * Two requests whose transactions lock the same two rows in opposite orders: PostgreSQL
 * detects the deadlock and aborts one of them. That one answers 503 with Retry-After, as a
 * problem, not a 500; the other completes. PGlite is one session: it cannot deadlock.
 */
let t: TestApp;

beforeAll(async () => {
  if (!onPostgres()) return;
  // Each side takes its second lock once both hold their first.
  let holding = 0;
  let bothHold = () => {};
  const both = new Promise<void>((resolve) => (bothHold = resolve));
  t = await createTestApp({
    deps: {
      extraRoutes: (app) => {
        app.post<{ Params: { first: string } }>('/v1/_test/race/:first', { schema: { hide: true } }, async (request) => {
          const first = Number(request.params.first);
          await t.db.transaction(async (tx) => {
            await tx.query('SELECT 1 FROM race_probe WHERE id = $1 FOR UPDATE', [first]);
            if (++holding === 2) bothHold();
            await both;
            await tx.query('SELECT 1 FROM race_probe WHERE id = $1 FOR UPDATE', [3 - first]);
          });
          return { ok: true };
        });
      },
    },
  });
  await t.db.exec('CREATE TABLE race_probe (id int PRIMARY KEY); INSERT INTO race_probe VALUES (1), (2)');
});
afterAll(async () => t?.close());

it.skipIf(!onPostgres())(
  'a request whose transaction is a deadlock’s victim answers 503 with Retry-After (PostgreSQL only: PGlite is one session)',
  async () => {
    const answers = await Promise.all([t.post('/v1/_test/race/1', {}), t.post('/v1/_test/race/2', {})]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 503]);
    const lost = answers.find((a) => a.status === 503)!;
    expect(lost.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(lost.headers['retry-after']).toBe('1');
    expect(lost.body).toMatchObject({ code: 'unavailable', status: 503 });
    expect(lost.text).not.toMatch(/deadlock|SELECT/i);
  },
  30_000,
);
