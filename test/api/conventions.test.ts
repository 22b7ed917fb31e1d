import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createReseller } from '../helpers/fixtures.js';

let t: TestApp;
let plan: { id: string };
let failNext = 0;
let slowInside = false;
let releaseSlow = () => undefined as void;
const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
beforeAll(async () => {
  t = await createTestApp({
    deps: {
      extraRoutes: (app) => {
        // Test-only: a POST that fails with 500 on demand, to show 5xx results are not stored.
        app.post('/v1/_test/flaky', { schema: { hide: true, body: Type.Object({ n: Type.Integer() }) } }, async (_req, reply) => {
          if (failNext-- > 0) throw new Error('transient');
          return reply.code(201).send({ ok: true, at: Date.now() });
        });
        // Test-only: a POST that holds until the test releases it.
        app.post('/v1/_test/slow', { schema: { hide: true } }, async () => {
          slowInside = true;
          await slowGate;
          return { ok: true };
        });
      },
    },
  });
  plan = await createPlan(t);
});
afterAll(async () => t.close());

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('cursor pagination', () => {
  it('pages newest first with next_cursor and Link, stable under inserts', async () => {
    const reseller = await createReseller(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createAccount(t, plan.id, undefined, { reseller_id: reseller.id })).id);
    const newestFirst = [...ids].reverse();
    const first = await t.get(`/v1/accounts?reseller_id=${reseller.id}&limit=2`);
    expect(first.body.data.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.body.next_cursor).toBeTruthy();
    const link = String(first.headers.link);
    expect(link).toMatch(/^<\/v1\/accounts\?reseller_id=.+&limit=2&cursor=.+>; rel="next"$/);
    // A concurrent insert must not shift the next page.
    await createAccount(t, plan.id, undefined, { reseller_id: reseller.id });
    const second = await t.get(link.slice(1, link.indexOf('>')));
    expect(second.body.data.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(2, 4));
    const third = await t.get(`/v1/accounts?reseller_id=${reseller.id}&limit=2&cursor=${second.body.next_cursor}`);
    expect(third.body.data.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(4));
    expect(third.body.next_cursor).toBeNull();
    expect(third.headers.link).toBeUndefined();
  });

  it('defaults to 50 and caps at 200', async () => {
    expect((await t.get('/v1/accounts?limit=200')).status).toBe(200);
    expect((await t.get('/v1/accounts?limit=201')).status).toBe(400);
  });
});

describe('ETag and conditional requests', () => {
  it('GET returns an ETag; If-None-Match gives 304', async () => {
    const acc = await createAccount(t, plan.id);
    const r = await t.get(`/v1/accounts/${acc.id}`);
    expect(r.headers.etag).toBe(`"${acc.version}"`);
    const again = await t.get(`/v1/accounts/${acc.id}`, undefined, { 'if-none-match': String(r.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('If-Match with a stale ETag is 412 and changes nothing; the current one succeeds', async () => {
    const acc = await createAccount(t, plan.id);
    const stale = await t.request('PATCH', `/v1/accounts/${acc.id}`, {
      body: { display_name: 'New' },
      headers: { 'if-match': '"999"' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe('precondition_failed');
    expect((await t.get(`/v1/accounts/${acc.id}`)).body.display_name).toBe(acc.display_name);
    const ok = await t.request('PATCH', `/v1/accounts/${acc.id}`, {
      body: { display_name: 'New' },
      headers: { 'if-match': `"${acc.version}"` },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.version).toBe(acc.version + 1);
    expect(ok.headers.etag).toBe(`"${acc.version + 1}"`);
    const del = await t.request('DELETE', `/v1/plans/${plan.id}`, { headers: { 'if-match': '"0"' } });
    expect(del.status).toBe(412);
  });

  it('two writers with the same ETag: exactly one wins', async () => {
    const acc = await createAccount(t, plan.id);
    const headers = { 'if-match': `"${acc.version}"` };
    const results = await Promise.all([
      t.request('PATCH', `/v1/accounts/${acc.id}`, { body: { display_name: 'A' }, headers }),
      t.request('PATCH', `/v1/accounts/${acc.id}`, { body: { display_name: 'B' }, headers }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
  });
});

describe('JSON Merge Patch', () => {
  it('accepts application/merge-patch+json; null removes nested keys', async () => {
    const acc = await createAccount(t, plan.id, undefined, { limit_overrides: { max_sites: 9, max_domains: 9 } });
    const r = await t.request('PATCH', `/v1/accounts/${acc.id}`, {
      raw: JSON.stringify({ limit_overrides: { max_sites: null, max_backups: 7 } }),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(r.status).toBe(200);
    expect(r.body.limit_overrides).toEqual({ max_domains: 9, max_backups: 7 });
    expect(r.body.limits.max_sites).toBe(5);
    expect(r.body.display_name).toBe(acc.display_name);
  });

  it('PUT requires every mutable field', async () => {
    const acc = await createAccount(t, plan.id);
    const r = await t.request('PUT', `/v1/accounts/${acc.id}`, { body: { display_name: 'Only this' } });
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
      '/contact_email',
      '/limit_overrides',
      '/plan_id',
    ]);
  });
});

describe('Idempotency-Key', () => {
  it('replays the first response with Idempotent-Replayed', async () => {
    const body = { name: 'Idem reseller', contact_email: 'x@y.example.com' };
    const first = await t.post('/v1/resellers', body, undefined, { 'idempotency-key': 'key-1' });
    expect(first.status).toBe(201);
    const second = await t.post('/v1/resellers', body, undefined, { 'idempotency-key': '"key-1"' });
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(second.headers.location).toBe(first.headers.location);
    const count = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM resellers WHERE name = 'Idem reseller'`);
    expect(count.rows[0]?.n).toBe(1);
  });

  it('the same key with a different body is 422 idempotency_key_reused', async () => {
    await t.post('/v1/resellers', { name: 'R1', contact_email: 'x@y.example.com' }, undefined, { 'idempotency-key': 'key-2' });
    const r = await t.post('/v1/resellers', { name: 'R2', contact_email: 'x@y.example.com' }, undefined, {
      'idempotency-key': 'key-2',
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('idempotency_key_reused');
  });

  it('keys are per principal', async () => {
    const reseller = await createReseller(t);
    const tok = (await t.post('/v1/tokens', { name: 'r', scopes: ['*'], principal: { kind: 'reseller', id: reseller.id } })).body
      .secret;
    const mine = await t.post(
      '/v1/plans',
      {
        name: 'p-idem',
        max_sites: 1,
        max_domains: 1,
        max_email_accounts: 1,
        max_email_quota_mb: 1,
        disk_quota_mb: 1,
        max_backups: 1,
        max_dns_records_per_domain: 1,
      },
      tok,
      { 'idempotency-key': 'shared' },
    );
    const theirs = await t.post('/v1/resellers', { name: 'other', contact_email: 'x@y.example.com' }, undefined, {
      'idempotency-key': 'shared',
    });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a request still in flight is 409 idempotency_key_in_use', async () => {
    const first = t.post('/v1/_test/slow', {}, undefined, { 'idempotency-key': 'slow-1' });
    await eventually(async () => slowInside);
    const b = await t.post('/v1/_test/slow', {}, undefined, { 'idempotency-key': 'slow-1' });
    releaseSlow();
    expect((await first).status).toBe(200);
    expect(b.status).toBe(409);
    expect(b.body.code).toBe('idempotency_key_in_use');
  });

  it('a claim left by a process that died is taken over after five minutes', async () => {
    const body = { name: 'Orphaned', contact_email: 'x@y.example.com' };
    const first = await t.post('/v1/resellers', body, undefined, { 'idempotency-key': 'orphan-1' });
    // As if the process had died between claiming the key and answering.
    await t.db.query(`UPDATE idempotency_keys SET state = 'running', body = NULL WHERE key = $1`, [sha256('orphan-1')]);
    expect((await t.post('/v1/resellers', body, undefined, { 'idempotency-key': 'orphan-1' })).status).toBe(409);
    t.clock.advance(5 * 60 * 1000 + 1000);
    const retry = await t.post('/v1/resellers', body, undefined, { 'idempotency-key': 'orphan-1' });
    expect(retry.status).toBe(201);
    expect(retry.body.id).not.toBe(first.body.id);
  });

  it('a replayed response keeps its one-time secret, which is never stored in the clear', async () => {
    const body = { name: 'replayed token', scopes: ['accounts:read'] };
    const first = await t.post('/v1/tokens', body, undefined, { 'idempotency-key': 'secret-1' });
    expect(first.status).toBe(201);
    const replay = await t.post('/v1/tokens', body, undefined, { 'idempotency-key': 'secret-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.secret).toBe(first.body.secret);
    const stored = JSON.stringify((await t.db.query('SELECT * FROM idempotency_keys')).rows);
    expect(stored).not.toContain(first.body.secret);
    expect(stored).not.toContain('secret-1');
  });

  it('5xx results are not stored: a retry runs again', async () => {
    failNext = 1;
    const first = await t.post('/v1/_test/flaky', { n: 1 }, undefined, { 'idempotency-key': 'flaky-1' });
    expect(first.status).toBe(500);
    const retry = await t.post('/v1/_test/flaky', { n: 1 }, undefined, { 'idempotency-key': 'flaky-1' });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    const replay = await t.post('/v1/_test/flaky', { n: 1 }, undefined, { 'idempotency-key': 'flaky-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(retry.body);
  });

  it('4xx results are stored and replayed', async () => {
    const bad = { name: '', contact_email: 'x@y.example.com' };
    const first = await t.post('/v1/resellers', bad, undefined, { 'idempotency-key': 'bad-1' });
    expect(first.status).toBe(422);
    const again = await t.post('/v1/resellers', bad, undefined, { 'idempotency-key': 'bad-1' });
    expect(again.status).toBe(422);
  });

  it('keys expire after 24 hours', async () => {
    const body = { name: 'Expiring', contact_email: 'x@y.example.com' };
    const first = await t.post('/v1/resellers', body, undefined, { 'idempotency-key': 'exp-1' });
    t.clock.advance(24 * 3600 * 1000 + 1000);
    const later = await t.post('/v1/resellers', body, undefined, { 'idempotency-key': 'exp-1' });
    expect(later.status).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.body.id).not.toBe(first.body.id);
  });

  it('a malformed key is 400', async () => {
    const r = await t.post('/v1/resellers', { name: 'x', contact_email: 'x@y.example.com' }, undefined, {
      'idempotency-key': 'é'.repeat(3),
    });
    expect(r.status).toBe(400);
  });
});
