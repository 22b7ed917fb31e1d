import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { PLAN_LIMITS, createAccount, createPlan, createReseller, createToken } from '../helpers/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('resellers', () => {
  it('CRUD with versions', async () => {
    const r = await t.post('/v1/resellers', { name: 'Acme Hosting', contact_email: 'ops@acme.example.com', max_accounts: 10 });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'Acme Hosting', status: 'active', max_accounts: 10, version: 1 });
    const put = await t.request('PUT', `/v1/resellers/${r.body.id}`, {
      body: { name: 'Acme', contact_email: 'ops@acme.example.com', status: 'active', max_accounts: null },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'Acme', max_accounts: null, version: 2 });
    expect((await t.get(`/v1/resellers?q=acme`)).body.data.map((x: { id: string }) => x.id)).toContain(r.body.id);
    expect((await t.get(`/v1/resellers?status=suspended`)).body.data.map((x: { id: string }) => x.id)).not.toContain(r.body.id);
    expect((await t.request('DELETE', `/v1/resellers/${r.body.id}`)).status).toBe(204);
    expect((await t.get(`/v1/resellers/${r.body.id}`)).status).toBe(404);
  });

  it('a reseller with accounts cannot be deleted: 409 in_use', async () => {
    const reseller = await createReseller(t);
    const plan = await createPlan(t);
    await createAccount(t, plan.id, undefined, { reseller_id: reseller.id });
    const r = await t.request('DELETE', `/v1/resellers/${reseller.id}`);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('in_use');
  });

  it('an operator can place an account under a reseller; an unknown reseller is 422', async () => {
    const plan = await createPlan(t);
    const r = await t.post('/v1/accounts', {
      username: 'ghostly',
      contact_email: 'x@example.com',
      plan_id: plan.id,
      reseller_id: 'rsl_01jd3x9v6ef8tb2q4w5n7k8m9p',
    });
    expect(r.status).toBe(422);
    expect(r.body.errors[0].pointer).toBe('/reseller_id');
  });
});

describe('plans', () => {
  it('CRUD; names unique per owner', async () => {
    const p = await t.post('/v1/plans', { name: 'Starter', description: 'small', ...PLAN_LIMITS, features: ['ssl', 'php'] });
    expect(p.status).toBe(201);
    expect(p.body).toMatchObject({ name: 'Starter', reseller_id: null, features: ['ssl', 'php'], ...PLAN_LIMITS });
    const dup = await t.post('/v1/plans', { name: 'starter', ...PLAN_LIMITS });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('already_exists');
    const reseller = await createReseller(t);
    const tok = await createToken(t, { principal: { kind: 'reseller', id: reseller.id } });
    const own = await t.post('/v1/plans', { name: 'Starter', ...PLAN_LIMITS }, tok);
    expect(own.status).toBe(201);
    expect(own.body.reseller_id).toBe(reseller.id);
    const patched = await t.request('PATCH', `/v1/plans/${own.body.id}`, { body: { max_sites: 50 }, token: tok });
    expect(patched.body).toMatchObject({ max_sites: 50, version: 2 });
    const rename = await t.request('PATCH', `/v1/plans/${p.body.id}`, { body: { name: 'Starter' } });
    expect(rename.status).toBe(200);
    expect((await t.get('/v1/plans?name=starter')).body.data.length).toBeGreaterThanOrEqual(1);
  });

  it('features are a closed set, limits non-negative', async () => {
    const r = await t.post('/v1/plans', { name: 'Bad', ...PLAN_LIMITS, max_sites: -1, features: ['ssl', 'ftp'] });
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(
      expect.arrayContaining(['/max_sites', '/features/1']),
    );
  });

  it('a plan in use cannot be deleted: 409 in_use', async () => {
    const plan = await createPlan(t);
    await createAccount(t, plan.id);
    const r = await t.request('DELETE', `/v1/plans/${plan.id}`);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('in_use');
    const unused = await createPlan(t);
    expect((await t.request('DELETE', `/v1/plans/${unused.id}`)).status).toBe(204);
  });
});
