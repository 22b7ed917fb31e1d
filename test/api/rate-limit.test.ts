import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';
import { createToken } from '../helpers/fixtures.js';

describe('rate limit headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { BERTH_RATE_LIMIT_READ: '3', BERTH_RATE_LIMIT_WRITE: '2' } });
  });
  afterAll(async () => t.close());

  it('every response carries RateLimit-Policy and RateLimit; 429 adds Retry-After', async () => {
    const first = await t.get('/v1/plans');
    expect(first.headers['ratelimit-policy']).toBe('"read";q=3;w=60');
    expect(first.headers.ratelimit).toMatch(/^"read";r=2;t=\d+$/);
    await t.get('/v1/plans');
    await t.get('/v1/plans');
    const limited = await t.get('/v1/plans');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'rate_limited', policy: 'read' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.headers.ratelimit).toMatch(/^"read";r=0;/);
    // Buckets are per token, and writes have their own policy.
    const other = await createToken(t, { scopes: ['plans:read'] });
    expect((await t.get('/v1/plans', other)).status).toBe(200);
    expect((await t.get('/', null)).headers['ratelimit-policy']).toBe('"read";q=3;w=60');
    t.clock.advance(60_000);
    expect((await t.get('/v1/plans')).status).toBe(200);
  });

  it('errors carry the headers too', async () => {
    const r = await t.get('/v1/accounts?bogus=1', OPERATOR_TOKEN);
    expect(r.headers['ratelimit-policy']).toBeDefined();
  });
});

describe('concurrency limit', () => {
  it('more than N requests in flight for one token are 429', async () => {
    // The handler holds until released: which requests overlap never depends on timing.
    let release = () => undefined as void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let inside = 0;
    const t = await createTestApp({
      env: { BERTH_RATE_LIMIT_CONCURRENT: '2' },
      deps: {
        extraRoutes: (app) =>
          app.get(
            '/v1/_test/wait',
            { schema: { hide: true, response: { 200: Type.Object({ ok: Type.Boolean() }) } } },
            async () => {
              inside++;
              await gate;
              return { ok: true };
            },
          ),
      },
    });
    try {
      const held = [1, 2].map(() => t.get('/v1/_test/wait'));
      await eventually(async () => inside === 2);
      expect((await t.get('/v1/_test/wait')).status).toBe(429);
      release();
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
      expect((await t.get('/v1/_test/wait')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('database-backed buckets', () => {
  it("two processes on one database share a token's bucket", async () => {
    const shared = await freshDb();
    const env = { BERTH_RATE_LIMIT_STORE: 'database', BERTH_RATE_LIMIT_READ: '4' };
    const a = await createTestApp({ db: shared.db, env, jobs: false });
    const b = await createTestApp({ db: shared.db, env, jobs: false });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await a.get('/v1/plans')).status);
        statuses.push((await b.get('/v1/plans')).status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    } finally {
      await a.close();
      await b.close();
      await shared.db.close();
      await shared.drop();
    }
  });
});
