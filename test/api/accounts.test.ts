import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountHome } from '../../src/layout.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { PLAN_LIMITS, createAccount, createPlan, createReseller, createToken } from '../helpers/fixtures.js';

let t: TestApp;
let plan: { id: string };
beforeAll(async () => {
  t = await createTestApp();
  plan = await createPlan(t);
});
afterAll(async () => t.close());

const eventTypes = async (resourceId: string) =>
  (await t.get(`/v1/events?resource_id=${resourceId}`)).body.data.map((e: { type: string }) => e.type);

describe('accounts', () => {
  it('creates an account with limits, usage and an event in the same transaction', async () => {
    const r = await t.post('/v1/accounts', {
      username: 'alice1',
      contact_email: 'alice@example.com',
      plan_id: plan.id,
      limit_overrides: { max_sites: 9 },
    });
    expect(r.status).toBe(201);
    expect(r.headers.location).toBe(`/v1/accounts/${r.body.id}`);
    expect(r.body).toMatchObject({
      username: 'alice1',
      display_name: 'alice1',
      status: 'active',
      suspension: null,
      reseller_id: null,
      limits: { ...PLAN_LIMITS, max_sites: 9 },
      usage: { sites: 0, domains: 0, email_accounts: 0, disk_bytes: 0, backups: 0 },
      version: 1,
    });
    expect(r.body.id).toMatch(/^acc_[0-9a-z]{26}$/);
    const events = await t.get(`/v1/events?resource_id=${r.body.id}`);
    expect(events.body.data[0]).toMatchObject({
      type: 'account.created',
      account_id: r.body.id,
      resource: { type: 'account', id: r.body.id, version: 1 },
    });
    expect(events.body.data[0].data.username).toBe('alice1');
  });

  it('usernames are unique: 409 already_exists', async () => {
    await createAccount(t, plan.id, undefined, { username: 'bobby' });
    const r = await t.post('/v1/accounts', { username: 'bobby', contact_email: 'b@example.com', plan_id: plan.id });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('already_exists');
  });

  it('username is immutable', async () => {
    const acc = await createAccount(t, plan.id);
    const r = await t.request('PATCH', `/v1/accounts/${acc.id}`, { body: { username: 'other' } });
    expect(r.status).toBe(422);
    expect(r.body.errors[0]).toMatchObject({ pointer: '/username', code: 'unknown_field' });
  });

  it('PUT replaces every mutable field: overrides left out are gone', async () => {
    const acc = await createAccount(t, plan.id, undefined, { limit_overrides: { max_sites: 9 } });
    const r = await t.request('PUT', `/v1/accounts/${acc.id}`, {
      body: { display_name: 'Alice Ltd', contact_email: 'ops@alice.example.com', plan_id: plan.id, limit_overrides: {} },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      display_name: 'Alice Ltd',
      contact_email: 'ops@alice.example.com',
      limit_overrides: {},
      limits: PLAN_LIMITS,
      version: 2,
    });
    const partial = await t.request('PUT', `/v1/accounts/${acc.id}`, { body: { display_name: 'Only this' } });
    expect(partial.status).toBe(422);
  });

  it('an unknown or foreign plan is a 422 pointing at plan_id', async () => {
    const reseller = await createReseller(t);
    const tok = await createToken(t, { principal: { kind: 'reseller', id: reseller.id } });
    const own = await createPlan(t, tok);
    const r = await t.post('/v1/accounts', { username: 'planless', contact_email: 'x@example.com', plan_id: own.id });
    expect(r.status).toBe(422);
    expect(r.body.errors[0]).toMatchObject({ pointer: '/plan_id', code: 'unknown_plan' });
    expect(
      (await t.post('/v1/accounts', { username: 'withplan', contact_email: 'x@example.com', plan_id: own.id }, tok)).status,
    ).toBe(201);
  });

  it('lists with filters', async () => {
    const acc = await createAccount(t, plan.id, undefined, { username: 'filterme', display_name: 'Findable Person' });
    expect((await t.get('/v1/accounts?username=filterme')).body.data.map((a: { id: string }) => a.id)).toEqual([acc.id]);
    expect((await t.get('/v1/accounts?q=findable')).body.data.map((a: { id: string }) => a.id)).toEqual([acc.id]);
    const list = await t.get('/v1/accounts?status=suspended');
    expect(list.body.data.every((a: { status: string }) => a.status === 'suspended')).toBe(true);
    const since = await t.get(`/v1/accounts?updated_since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(since.body.data).toEqual([]);
    expect(list.body.data[0]?.usage).toBeUndefined();
  });
});

describe('reseller limits', () => {
  it('max_accounts is enforced with 403 quota_exceeded', async () => {
    const reseller = await createReseller(t, { max_accounts: 1 });
    const tok = await createToken(t, { principal: { kind: 'reseller', id: reseller.id } });
    await createAccount(t, plan.id, tok);
    const r = await t.post('/v1/accounts', { username: 'toomany', contact_email: 'x@example.com', plan_id: plan.id }, tok);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'quota_exceeded', limit: 1, usage: 1 });
  });

  it("a suspended reseller's principals cannot write", async () => {
    const reseller = await createReseller(t);
    const tok = await createToken(t, { principal: { kind: 'reseller', id: reseller.id } });
    const acc = await createAccount(t, plan.id, tok);
    const accTok = await createToken(t, { principal: { kind: 'account', id: acc.id } });
    expect((await t.request('PATCH', `/v1/resellers/${reseller.id}`, { body: { status: 'suspended' } })).status).toBe(200);
    const r = await t.request('PATCH', `/v1/accounts/${acc.id}`, { body: { display_name: 'x' }, token: accTok });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('account_suspended');
    expect(
      (await t.post('/v1/accounts', { username: 'blocked', contact_email: 'x@example.com', plan_id: plan.id }, tok)).body.code,
    ).toBe('account_suspended');
    expect((await t.get(`/v1/accounts/${acc.id}`, accTok)).status).toBe(200);
  });
});

describe('suspension', () => {
  it('suspend and unsuspend, with events; the account becomes read-only to its owner', async () => {
    const acc = await createAccount(t, plan.id);
    const owner = await createToken(t, { principal: { kind: 'account', id: acc.id } });
    const s = await t.post(`/v1/accounts/${acc.id}/suspend`, { reason: 'unpaid invoice' });
    expect(s.status).toBe(200);
    expect(s.body.status).toBe('suspended');
    expect(s.body.suspension).toMatchObject({ reason: 'unpaid invoice' });
    const blocked = await t.request('PATCH', `/v1/accounts/${acc.id}`, { body: { display_name: 'x' }, token: owner });
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe('account_suspended');
    expect((await t.post(`/v1/accounts/${acc.id}/suspend`, { reason: 'x' }, owner)).body.code).toBe('forbidden');
    const u = await t.post(`/v1/accounts/${acc.id}/unsuspend`);
    expect(u.body).toMatchObject({ status: 'active', suspension: null });
    expect((await t.request('PATCH', `/v1/accounts/${acc.id}`, { body: { display_name: 'Back' }, token: owner })).status).toBe(
      200,
    );
    expect(await eventTypes(acc.id)).toEqual(['account.updated', 'account.unsuspended', 'account.suspended', 'account.created']);
  });

  it('suspend needs a reason', async () => {
    const acc = await createAccount(t, plan.id);
    expect((await t.post(`/v1/accounts/${acc.id}/suspend`, {})).status).toBe(422);
  });
});

describe('usage and plan changes', () => {
  it('measures disk from the real files and refuses a plan the usage exceeds', async () => {
    const acc = await createAccount(t, plan.id);
    const home = accountHome(t.dataDir, acc.id);
    mkdirSync(path.join(home, 'sites'), { recursive: true });
    writeFileSync(path.join(home, 'sites', 'index.html'), Buffer.alloc(3 * 1024 * 1024, 1));
    const usage = await t.get(`/v1/accounts/${acc.id}/usage`);
    expect(usage.status).toBe(200);
    expect(usage.body.usage.disk_bytes).toBe(3 * 1024 * 1024);
    expect(usage.body.exceeded).toEqual([]);
    const tiny = await createPlan(t, undefined, { disk_quota_mb: 1, max_backups: 0 });
    const r = await t.request('PATCH', `/v1/accounts/${acc.id}`, { body: { plan_id: tiny.id } });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'quota_exceeded', limit: 1024 * 1024, usage: 3 * 1024 * 1024 });
    expect(r.body.exceeded).toEqual([{ limit: 'disk_quota_mb', allowed: 1024 * 1024, usage: 3 * 1024 * 1024 }]);
    expect((await t.get(`/v1/accounts/${acc.id}`)).body.plan_id).toBe(plan.id);
    const big = await createPlan(t, undefined, { disk_quota_mb: 10 });
    expect((await t.request('PATCH', `/v1/accounts/${acc.id}`, { body: { plan_id: big.id } })).status).toBe(200);
  });

  it('an account may not change its own plan', async () => {
    const acc = await createAccount(t, plan.id);
    const owner = await createToken(t, { principal: { kind: 'account', id: acc.id } });
    const r = await t.request('PATCH', `/v1/accounts/${acc.id}`, { body: { plan_id: plan.id }, token: owner });
    expect(r.status).toBe(403);
  });
});

describe('termination', () => {
  it('DELETE is 202 terminating with an operation; then the account is gone', async () => {
    const acc = await createAccount(t, plan.id);
    const owner = await createToken(t, { principal: { kind: 'account', id: acc.id } });
    const home = accountHome(t.dataDir, acc.id);
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, 'file'), 'x');
    const r = await t.request('DELETE', `/v1/accounts/${acc.id}`);
    expect(r.status).toBe(202);
    expect(r.body.status).toBe('terminating');
    expect(r.body.operation).toMatchObject({ type: 'account.terminate', resource: { type: 'account', id: acc.id } });
    expect(r.headers.location).toBe(`/v1/operations/${r.body.operation.id}`);
    const again = await t.request('DELETE', `/v1/accounts/${acc.id}`);
    expect(again.status).toBe(202);
    expect(again.body.operation.id).toBe(r.body.operation.id);
    await eventually(async () => (await t.get(`/v1/accounts/${acc.id}`)).status === 404);
    const op = await t.get(`/v1/operations/${r.body.operation.id}`);
    expect(op.body).toMatchObject({ status: 'succeeded', progress: 100 });
    expect(existsSync(home)).toBe(false);
    expect((await t.get('/v1/me', owner)).status).toBe(401);
    expect(await eventTypes(acc.id)).toContain('account.deleted');
  });

  it('owners cannot terminate their own account', async () => {
    const acc = await createAccount(t, plan.id);
    const owner = await createToken(t, { principal: { kind: 'account', id: acc.id } });
    expect((await t.request('DELETE', `/v1/accounts/${acc.id}`, { token: owner })).body.code).toBe('forbidden');
  });
});
