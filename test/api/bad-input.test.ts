import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { PLAN_LIMITS, createPlan } from '../helpers/fixtures.js';

let t: TestApp;
let planId: string;
beforeAll(async () => {
  t = await createTestApp();
  planId = (await createPlan(t)).id;
});
afterAll(async () => t.close());

const counts = async () => {
  const r = await t.db.query<{ a: number; p: number; r: number; e: number }>(
    `SELECT (SELECT count(*)::int FROM accounts) AS a, (SELECT count(*)::int FROM plans) AS p,
            (SELECT count(*)::int FROM resellers) AS r, (SELECT count(*)::int FROM events) AS e`,
  );
  return r.rows[0];
};

/** Every bad request: a 4xx problem, never a 5xx, nothing written. */
async function expectRejected(
  method: string,
  url: string,
  opts: Parameters<TestApp['request']>[2],
  status: number,
  code: string,
) {
  const before = await counts();
  const r = await t.request(method, url, opts);
  expect(r.status, r.text).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(r.body.code).toBe(code);
  expect(r.body.request_id).toBe(r.headers['x-request-id']);
  expect(r.text).not.toMatch(/\bat \/|node_modules|SELECT |INSERT /);
  expect(await counts()).toEqual(before);
  return r.body;
}

const validAccount = () => ({
  username: `u${Math.random().toString(36).slice(2, 10)}`,
  contact_email: 'a@b.example.com',
  plan_id: planId,
});

describe('malformed bodies', () => {
  it('bad JSON is 400 malformed_request', async () => {
    await expectRejected(
      'POST',
      '/v1/accounts',
      { raw: '{"username": ', headers: { 'content-type': 'application/json' } },
      400,
      'malformed_request',
    );
  });

  it('an empty JSON body is 400', async () => {
    await expectRejected(
      'POST',
      '/v1/accounts',
      { raw: '', headers: { 'content-type': 'application/json' } },
      400,
      'malformed_request',
    );
  });

  it('prototype pollution keys are refused', async () => {
    await expectRejected(
      'POST',
      '/v1/accounts',
      { raw: '{"__proto__": {"x": 1}, "username": "abc"}', headers: { 'content-type': 'application/json' } },
      400,
      'malformed_request',
    );
  });

  it('a body over 1 MiB is 413 payload_too_large', async () => {
    const big = JSON.stringify({ ...validAccount(), display_name: 'x'.repeat(1024 * 1024 + 10) });
    await expectRejected(
      'POST',
      '/v1/accounts',
      { raw: big, headers: { 'content-type': 'application/json' } },
      413,
      'payload_too_large',
    );
  });

  it('a non-JSON content type is 415 unsupported_media_type', async () => {
    await expectRejected(
      'POST',
      '/v1/accounts',
      { raw: 'username=abc', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      415,
      'unsupported_media_type',
    );
  });

  it('a 415 says what was sent and what to send instead', async () => {
    const form = await t.request('POST', '/v1/accounts', {
      raw: 'username=abc',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.body).toMatchObject({
      code: 'unsupported_media_type',
      detail: 'Content-Type application/x-www-form-urlencoded is not accepted here; send application/json.',
      accepted_types: ['application/json'],
    });
    const patch = await t.request('PATCH', '/v1/plans/pln_01jd3x9v6ef8tb2q4w5n7k8m9p', {
      raw: 'a=b',
      headers: { 'content-type': 'text/csv' },
    });
    expect(patch.body.accepted_types).toEqual(['application/merge-patch+json', 'application/json']);
    // curl --data-binary's default type, and a near miss, on a deployment.
    for (const type of ['application/x-www-form-urlencoded', 'application/x-tar']) {
      const r = await t.request('POST', '/v1/sites/site_01jd3x9v6ef8tb2q4w5n7k8m9p/deployments', {
        raw: 'x',
        headers: { 'content-type': type },
      });
      expect(r.status).toBe(415);
      expect(r.body.detail).toBe(
        `Content-Type ${type} is not accepted here; send application/gzip or application/x-gzip or application/zip.`,
      );
    }
    const zone = await t.request('PUT', '/v1/domains/example.org/zone', {
      raw: 'a=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(zone.body).toMatchObject({ status: 415, accepted_types: ['text/dns'] });
  });

  it('a missing body says which object is expected', async () => {
    const r = await t.post('/v1/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p/suspend');
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ pointer: '', code: 'invalid_type', detail: 'must be a JSON object with reason' }]);
  });

  it('a JSON array instead of an object is 422', async () => {
    await expectRejected('POST', '/v1/accounts', { body: [validAccount()] }, 422, 'validation_failed');
  });
});

describe('validation lists every field error with a pointer', () => {
  it('unknown fields are 422 unknown_field', async () => {
    const body = await expectRejected(
      'POST',
      '/v1/accounts',
      { body: { ...validAccount(), is_admin: true } },
      422,
      'validation_failed',
    );
    expect(body.errors).toContainEqual(expect.objectContaining({ pointer: '/is_admin', code: 'unknown_field' }));
  });

  it('wrong types, missing fields and bad formats at once', async () => {
    const body = await expectRejected(
      'POST',
      '/v1/accounts',
      { body: { username: 42, contact_email: 'not-an-email', limit_overrides: { max_sites: -1 } } },
      422,
      'validation_failed',
    );
    const pointers = body.errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/username', '/contact_email', '/plan_id', '/limit_overrides/max_sites']));
  });

  it('numbers are not coerced from strings in bodies', async () => {
    const body = await expectRejected(
      'POST',
      '/v1/plans',
      { body: { name: 'x', ...PLAN_LIMITS, max_sites: '5' } },
      422,
      'validation_failed',
    );
    expect(body.errors[0]).toMatchObject({ pointer: '/max_sites', code: 'invalid_type' });
  });

  it('usernames with odd Unicode are refused', async () => {
    for (const username of ['ädmin', 'admin\u200b', 'ＡＤＭＩＮ', 'a\u0000b', 'AB']) {
      await expectRejected('POST', '/v1/accounts', { body: { ...validAccount(), username } }, 422, 'validation_failed');
    }
  });

  it('SQL-looking strings are stored as text, not executed', async () => {
    const name = "Robert'); DROP TABLE accounts;--";
    const r = await t.post('/v1/accounts', { ...validAccount(), display_name: name });
    expect(r.status).toBe(201);
    expect(r.body.display_name).toBe(name);
    expect((await t.get(`/v1/accounts?q=${encodeURIComponent("'; DROP")}`)).status).toBe(200);
    expect((await counts())?.a).toBeGreaterThan(0);
  });

  it('lone UTF-16 surrogates are refused in any string at any depth (422 with its pointer), never stored', async () => {
    // JSON.stringify writes a lone surrogate as an escape (`\udfff`), as a client's JSON does.
    const body = await expectRejected(
      'POST',
      '/v1/accounts',
      { body: { ...validAccount(), display_name: '\udfff\ud800x' } },
      422,
      'validation_failed',
    );
    expect(body.errors).toEqual([expect.objectContaining({ pointer: '/display_name', code: 'invalid_character' })]);
    const nested = await expectRejected(
      'PUT',
      `/v1/plans/${planId}`,
      { body: { name: 'P', description: 'a\ud800', ...PLAN_LIMITS, features: [] } },
      422,
      'validation_failed',
    );
    expect(nested.errors[0].pointer).toBe('/description');
  });

  it('odd but valid Unicode round-trips in free text', async () => {
    const display = 'Zoë 🚀 مرحبا \u202e';
    const r = await t.post('/v1/accounts', { ...validAccount(), display_name: display });
    expect(r.status).toBe(201);
    expect((await t.get(`/v1/accounts/${r.body.id}`)).body.display_name).toBe(display);
  });
});

describe('query parameters and ids', () => {
  it('unknown query parameters are 400', async () => {
    const body = await expectRejected('GET', '/v1/accounts?colour=red', {}, 400, 'malformed_request');
    expect(body.errors[0].pointer).toBe('/query/colour');
  });

  it('limit outside 1-200 is 400', async () => {
    await expectRejected('GET', '/v1/accounts?limit=0', {}, 400, 'malformed_request');
    await expectRejected('GET', '/v1/accounts?limit=201', {}, 400, 'malformed_request');
    await expectRejected('GET', '/v1/accounts?limit=ten', {}, 400, 'malformed_request');
  });

  it('a forged cursor is 400', async () => {
    await expectRejected('GET', '/v1/accounts?cursor=not-a-cursor', {}, 400, 'malformed_request');
  });

  it.each([
    '/v1/accounts/123',
    '/v1/accounts/acc_',
    '/v1/accounts/pln_01jd3x9v6ef8tb2q4w5n7k8m9p',
    "/v1/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p'%20OR%201=1",
    '/v1/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p',
    '/v1/plans/%00',
    '/v1/tokens/tok_zzzzzzzzzzzzzzzzzzzzzzzzzz',
  ])('malformed or unknown id %s is 404', async (url) => {
    await expectRejected('GET', url, {}, 404, 'not_found');
  });

  it('a malformed id on a write is 404 too', async () => {
    await expectRejected('PATCH', '/v1/accounts/nope', { body: { display_name: 'x' } }, 404, 'not_found');
    await expectRejected('DELETE', '/v1/plans/nope', {}, 404, 'not_found');
  });
});
