import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTokenSecret } from '../../src/auth/secret.js';
import { createTestApp, eventually, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createReseller, createToken } from '../helpers/fixtures.js';

let t: TestApp;
let plan: { id: string };
beforeAll(async () => {
  t = await createTestApp();
  plan = await createPlan(t);
});
afterAll(async () => t.close());

const expect401 = async (token: string | null, headers: Record<string, string> = {}) => {
  const r = await t.get('/v1/me', token, headers);
  expect(r.status).toBe(401);
  expect(r.body.code).toBe('unauthenticated');
  expect(r.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
  expect(r.headers.ratelimit).toMatch(/^"auth_failures";r=\d+;t=\d+$/);
};

describe('authentication', () => {
  it('missing, malformed, mistyped or unknown tokens are 401 with WWW-Authenticate', async () => {
    await expect401(null);
    await expect401(null, { authorization: 'Basic dXNlcjpwYXNz' });
    await expect401('berth_short');
    const real = await createToken(t, { scopes: ['plans:read'] });
    const typo = real.slice(0, 10) + (real[10] === 'a' ? 'b' : 'a') + real.slice(11);
    await expect401(typo);
    await expect401(generateTokenSecret());
  });

  it('the bootstrap token is the operator and reaches everything', async () => {
    const r = await t.get('/v1/me', OPERATOR_TOKEN);
    expect(r.status).toBe(200);
    expect(r.body.principal).toEqual({ kind: 'operator', id: null });
    expect(r.body.scopes).toEqual(['*']);
    expect(r.body.token.name).toBe('bootstrap');
  });

  it('a created token is shown once, works, and is stored only as a hash', async () => {
    const r = await t.post('/v1/tokens', { name: 'ci', scopes: ['plans:read'] });
    expect(r.status).toBe(201);
    expect(r.headers.location).toBe(`/v1/tokens/${r.body.id}`);
    const secret: string = r.body.secret;
    expect(secret).toMatch(/^berth_[0-9A-Za-z]{40}$/);
    expect(r.body.prefix).toBe(secret.slice(0, 12));
    const again = await t.get(`/v1/tokens/${r.body.id}`);
    expect(again.body.secret).toBeUndefined();
    expect(again.text).not.toContain(secret);
    const stored = await t.db.query('SELECT * FROM tokens WHERE id = $1', [r.body.id]);
    expect(JSON.stringify(stored.rows)).not.toContain(secret.slice(12));
    expect((await t.get('/v1/plans', secret)).status).toBe(200);
  });

  it('records when a token was last used', async () => {
    const r = await t.post('/v1/tokens', { name: 'used', scopes: ['plans:read'] });
    expect(r.body.last_used_at).toBeNull();
    await t.get('/v1/plans', r.body.secret);
    // Recorded off the request path, so it lands a moment later.
    await eventually(async () => (await t.get(`/v1/tokens/${r.body.id}`)).body.last_used_at !== null);
  });

  it('an expired token is 401', async () => {
    const r = await t.post('/v1/tokens', {
      name: 'short',
      scopes: ['plans:read'],
      expires_at: new Date(t.clock.now().getTime() + 60_000).toISOString(),
    });
    expect((await t.get('/v1/plans', r.body.secret)).status).toBe(200);
    t.clock.advance(61_000);
    expect((await t.get('/v1/plans', r.body.secret)).status).toBe(401);
  });

  it('a revoked token is 401 at once, and both changes are events', async () => {
    const r = await t.post('/v1/tokens', { name: 'revoke me', scopes: ['plans:read'] });
    expect((await t.get('/v1/plans', r.body.secret)).status).toBe(200);
    expect((await t.request('DELETE', `/v1/tokens/${r.body.id}`)).status).toBe(204);
    expect((await t.get('/v1/plans', r.body.secret)).status).toBe(401);
    expect((await t.get(`/v1/tokens/${r.body.id}`)).status).toBe(404);
    const events = await t.get(`/v1/events?resource_id=${r.body.id}`);
    expect(events.body.data.map((e: { type: string }) => e.type)).toEqual(['token.revoked', 'token.created']);
    expect(JSON.stringify(events.body)).not.toContain(r.body.secret);
  });

  it('allowed_ips restricts where a token works from', async () => {
    const elsewhere = await createToken(t, { scopes: ['plans:read'], allowed_ips: ['10.0.0.0/8', '2001:db8::/32'] });
    const here = await createToken(t, { scopes: ['plans:read'], allowed_ips: ['127.0.0.1'] });
    expect((await t.get('/v1/plans', elsewhere)).status).toBe(401);
    expect((await t.get('/v1/plans', here)).status).toBe(200);
  });
});

describe('minting tokens: only downwards, never broader', () => {
  it('a reseller mints for itself and its accounts, not for others', async () => {
    const ra = await createReseller(t);
    const rb = await createReseller(t);
    const tokenA = await createToken(t, { principal: { kind: 'reseller', id: ra.id } });
    const tokenB = await createToken(t, { principal: { kind: 'reseller', id: rb.id } });
    const accA = await createAccount(t, plan.id, tokenA);
    const accB = await createAccount(t, plan.id, tokenB);
    expect((await t.post('/v1/tokens', { name: 'self', scopes: ['accounts:read'] }, tokenA)).status).toBe(201);
    const forAccount = await t.post(
      '/v1/tokens',
      { name: 'acc', scopes: ['accounts:read'], principal: { kind: 'account', id: accA.id } },
      tokenA,
    );
    expect(forAccount.status).toBe(201);
    expect(forAccount.body.principal).toEqual({ kind: 'account', id: accA.id });
    const foreign = await t.post(
      '/v1/tokens',
      { name: 'x', scopes: ['accounts:read'], principal: { kind: 'account', id: accB.id } },
      tokenA,
    );
    expect(foreign.status).toBe(404);
    const up = await t.post(
      '/v1/tokens',
      { name: 'x', scopes: ['accounts:read'], principal: { kind: 'operator', id: null } },
      tokenA,
    );
    expect(up.status).toBe(403);
    expect(up.body.code).toBe('forbidden');
    const sideways = await t.post(
      '/v1/tokens',
      { name: 'x', scopes: ['accounts:read'], principal: { kind: 'reseller', id: rb.id } },
      tokenA,
    );
    expect(sideways.status).toBe(403);
  });

  it('an account mints only for itself', async () => {
    const acc = await createAccount(t, plan.id);
    const other = await createAccount(t, plan.id);
    const tokenAcc = await createToken(t, { principal: { kind: 'account', id: acc.id } });
    expect((await t.post('/v1/tokens', { name: 'me', scopes: ['accounts:read'] }, tokenAcc)).status).toBe(201);
    expect(
      (
        await t.post(
          '/v1/tokens',
          { name: 'x', scopes: ['accounts:read'], principal: { kind: 'account', id: other.id } },
          tokenAcc,
        )
      ).status,
    ).toBe(404);
  });

  it('never with more scopes than the minting token', async () => {
    const narrow = await createToken(t, { scopes: ['tokens:write', 'plans:read'] });
    const broader = await t.post('/v1/tokens', { name: 'x', scopes: ['plans:write'] }, narrow);
    expect(broader.status).toBe(403);
    expect(broader.body).toMatchObject({ code: 'insufficient_scope', scope: 'plans:write' });
    expect((await t.post('/v1/tokens', { name: 'x', scopes: ['*'] }, narrow)).status).toBe(403);
    expect((await t.post('/v1/tokens', { name: 'x', scopes: ['plans:read', 'tokens:read'] }, narrow)).status).toBe(201);
  });

  it('never with more reach or a longer life', async () => {
    const a1 = await createAccount(t, plan.id);
    const a2 = await createAccount(t, plan.id);
    const expires = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    const narrowed = await createToken(t, { account_ids: [a1.id], expires_at: expires });
    const wider = await t.post('/v1/tokens', { name: 'x', scopes: ['*'], account_ids: [a1.id, a2.id] }, narrowed);
    expect(wider.status).toBe(422);
    expect(wider.body.errors[0]).toMatchObject({ pointer: '/account_ids/1', code: 'out_of_reach' });
    const longer = await t.post(
      '/v1/tokens',
      { name: 'x', scopes: ['*'], expires_at: new Date(t.clock.now().getTime() + 86_400_000).toISOString() },
      narrowed,
    );
    expect(longer.status).toBe(422);
    expect(longer.body.errors[0]).toMatchObject({ pointer: '/expires_at', code: 'after_parent' });
    const inherited = await t.post('/v1/tokens', { name: 'x', scopes: ['*'] }, narrowed);
    expect(inherited.status).toBe(201);
    expect(inherited.body.account_ids).toEqual([a1.id]);
    expect(inherited.body.expires_at).toBe(expires);
  });

  it('rejects a past expiry and bad CIDRs, listing both', async () => {
    const r = await t.post('/v1/tokens', {
      name: 'x',
      scopes: ['*'],
      expires_at: '2000-01-01T00:00:00Z',
      allowed_ips: ['300.1.1.1/8'],
    });
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/expires_at', '/allowed_ips/0']);
  });
});

describe('scopes and reach', () => {
  it('a token narrowed by account_ids sees only those accounts', async () => {
    const a1 = await createAccount(t, plan.id);
    const a2 = await createAccount(t, plan.id);
    const narrowed = await createToken(t, { account_ids: [a1.id] });
    const list = await t.get('/v1/accounts', narrowed);
    expect(list.body.data.map((a: { id: string }) => a.id)).toEqual([a1.id]);
    expect((await t.get(`/v1/accounts/${a2.id}`, narrowed)).status).toBe(404);
    const me = await t.get('/v1/me', narrowed);
    expect(me.body.reach.account_ids).toEqual([a1.id]);
  });

  it('a missing scope on a reachable resource is 403 naming it; unreachable stays 404', async () => {
    const acc = await createAccount(t, plan.id);
    const plansOnly = await createToken(t, { scopes: ['plans:read'] });
    const r = await t.get(`/v1/accounts/${acc.id}`, plansOnly);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'insufficient_scope', scope: 'accounts:read' });
    expect((await t.get('/v1/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p', plansOnly)).status).toBe(404);
  });

  it('write implies read', async () => {
    const writer = await createToken(t, { scopes: ['accounts:write'] });
    expect((await t.get('/v1/accounts', writer)).status).toBe(200);
  });
});

describe('failed-authentication throttling', () => {
  it('never throttles a request that authenticates: bad tokens from an address do not shut out its other clients', async () => {
    const small = await createTestApp({ env: { BERTH_AUTH_FAILURES_PER_MINUTE: '3' } });
    try {
      for (let i = 0; i < 5; i++) await small.get('/v1/me', 'wrong');
      expect((await small.get('/v1/me', 'wrong')).status).toBe(429);
      expect((await small.get('/v1/me', OPERATOR_TOKEN)).status).toBe(200);
      expect((await small.get('/v1/me', null)).status).toBe(429);
    } finally {
      await small.close();
    }
  });

  it('slows an address down with 429 and Retry-After, then lets it in again', async () => {
    const small = await createTestApp({ env: { BERTH_AUTH_FAILURES_PER_MINUTE: '3' } });
    try {
      for (let i = 0; i < 3; i++) expect((await small.get('/v1/me', 'wrong')).status).toBe(401);
      const limited = await small.get('/v1/me', 'wrong');
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      small.clock.advance(21_000);
      expect((await small.get('/v1/me', 'wrong')).status).toBe(401);
    } finally {
      await small.close();
    }
  });
});
