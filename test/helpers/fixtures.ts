import type { TestApp } from './app.js';

let counter = 0;
const unique = (p: string) => `${p}${Date.now().toString(36).slice(-4)}${(counter++).toString(36)}`;

export const PLAN_LIMITS = {
  max_sites: 5,
  max_domains: 5,
  max_email_accounts: 10,
  max_email_quota_mb: 1024,
  disk_quota_mb: 1024,
  max_backups: 3,
  max_dns_records_per_domain: 100,
};

export async function createPlan(t: TestApp, token?: string, extra: Record<string, unknown> = {}) {
  const r = await t.post('/v1/plans', { name: unique('plan'), ...PLAN_LIMITS, features: ['ssl'], ...extra }, token);
  if (r.status !== 201) throw new Error(`plan: ${r.status} ${r.text}`);
  return r.body;
}

export async function createReseller(t: TestApp, extra: Record<string, unknown> = {}) {
  const r = await t.post('/v1/resellers', { name: unique('Reseller '), contact_email: 'ops@reseller.example.com', ...extra });
  if (r.status !== 201) throw new Error(`reseller: ${r.status} ${r.text}`);
  return r.body;
}

export async function createAccount(t: TestApp, planId: string, token?: string, extra: Record<string, unknown> = {}) {
  const r = await t.post(
    '/v1/accounts',
    { username: unique('u'), contact_email: 'owner@customer.example.com', plan_id: planId, ...extra },
    token,
  );
  if (r.status !== 201) throw new Error(`account: ${r.status} ${r.text}`);
  return r.body;
}

/** An account on a new plan of its own, with the default limits. */
export async function createAccountOnNewPlan(t: TestApp) {
  return createAccount(t, (await createPlan(t)).id);
}

export async function createToken(t: TestApp, body: Record<string, unknown>, token?: string): Promise<string> {
  const r = await t.post('/v1/tokens', { name: unique('token'), scopes: ['*'], ...body }, token);
  if (r.status !== 201) throw new Error(`token: ${r.status} ${r.text}`);
  return r.body.secret;
}

/** Operator, two resellers with an account each, and tokens for each principal. */
export async function world(t: TestApp) {
  const plan = await createPlan(t);
  const resellerA = await createReseller(t);
  const resellerB = await createReseller(t);
  const tokenA = await createToken(t, { principal: { kind: 'reseller', id: resellerA.id } });
  const tokenB = await createToken(t, { principal: { kind: 'reseller', id: resellerB.id } });
  const accountA = await createAccount(t, plan.id, tokenA);
  const accountB = await createAccount(t, plan.id, tokenB);
  const tokenAccountA = await createToken(t, { principal: { kind: 'account', id: accountA.id } });
  const readOnly = await createToken(t, {
    principal: { kind: 'reseller', id: resellerA.id },
    scopes: ['accounts:read', 'plans:read', 'resellers:read', 'tokens:read', 'events:read'],
  });
  return { plan, resellerA, resellerB, tokenA, tokenB, accountA, accountB, tokenAccountA, readOnly };
}
