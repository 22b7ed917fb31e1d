import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';
import { createPlan, createToken, world } from '../helpers/fixtures.js';

/**
 * The reach matrix: operator, reseller A, reseller B, an account of A and a read-only token of
 * A against every collection and item. Outside reach is 404 exactly like a missing id.
 */
let t: TestApp;
let w: Awaited<ReturnType<typeof world>>;
let items: Record<string, string>;
let callers: Record<string, string>;
beforeAll(async () => {
  t = await createTestApp({ jobs: false });
  w = await world(t);
  const planA = await createPlan(t, w.tokenA);
  const tokenOfAccountA = (
    await t.post('/v1/tokens', { name: 'acc-a', scopes: ['accounts:read'], principal: { kind: 'account', id: w.accountA.id } })
  ).body.id;
  const suspendedTwice = await t.post(`/v1/accounts/${w.accountA.id}/suspend`, { reason: 'r' });
  expect(suspendedTwice.status).toBe(200);
  await t.post(`/v1/accounts/${w.accountA.id}/unsuspend`);
  const event = (await t.get(`/v1/events?resource_id=${w.accountA.id}`)).body.data[0].id;
  const spare = await t.post(
    '/v1/accounts',
    { username: 'spareofa', contact_email: 'x@example.com', plan_id: w.plan.id },
    w.tokenA,
  );
  const operation = (await t.request('DELETE', `/v1/accounts/${spare.body.id}`)).body.operation.id;
  items = {
    reseller: `/v1/resellers/${w.resellerA.id}`,
    plan: `/v1/plans/${planA.id}`,
    account: `/v1/accounts/${w.accountA.id}`,
    usage: `/v1/accounts/${w.accountA.id}/usage`,
    token: `/v1/tokens/${tokenOfAccountA}`,
    operation: `/v1/operations/${operation}`,
    event: `/v1/events/${event}`,
  };
  callers = {
    operator: OPERATOR_TOKEN,
    resellerA: w.tokenA,
    resellerB: w.tokenB,
    accountA: w.tokenAccountA,
    readOnlyA: w.readOnly,
  };
});
afterAll(async () => t.close());

// 200: visible; 404: outside reach.
const EXPECTED: Record<string, Record<string, number>> = {
  operator: { reseller: 200, plan: 200, account: 200, usage: 200, token: 200, operation: 200, event: 200 },
  resellerA: { reseller: 200, plan: 200, account: 200, usage: 200, token: 200, operation: 200, event: 200 },
  resellerB: { reseller: 404, plan: 404, account: 404, usage: 404, token: 404, operation: 404, event: 404 },
  accountA: { reseller: 404, plan: 200, account: 200, usage: 200, token: 200, operation: 404, event: 200 },
  readOnlyA: { reseller: 200, plan: 200, account: 200, usage: 200, token: 200, operation: 200, event: 200 },
};

describe('item reads', () => {
  for (const [who, row] of Object.entries(EXPECTED)) {
    for (const [item, status] of Object.entries(row)) {
      it(`${who} GET ${item} → ${status}`, async () => {
        const r = await t.get(items[item] as string, callers[who]);
        expect(r.status, r.text).toBe(status);
        if (status === 404) expect(r.body.code).toBe('not_found');
      });
    }
  }
});

describe('collections hold only what is in reach', () => {
  const ids = async (url: string, who: string) =>
    (await t.get(`${url}?limit=200`, callers[who])).body.data.map((x: { id: string }) => x.id);

  it('accounts', async () => {
    expect(await ids('/v1/accounts', 'operator')).toEqual(expect.arrayContaining([w.accountA.id, w.accountB.id]));
    expect(await ids('/v1/accounts', 'resellerA')).toContain(w.accountA.id);
    expect(await ids('/v1/accounts', 'resellerA')).not.toContain(w.accountB.id);
    expect(await ids('/v1/accounts', 'resellerB')).toEqual([w.accountB.id]);
    expect(await ids('/v1/accounts', 'accountA')).toEqual([w.accountA.id]);
  });

  it('resellers', async () => {
    expect(await ids('/v1/resellers', 'resellerA')).toEqual([w.resellerA.id]);
    expect(await ids('/v1/resellers', 'accountA')).toEqual([]);
    expect((await ids('/v1/resellers', 'operator')).length).toBeGreaterThanOrEqual(2);
  });

  it("plans: global ones plus the reseller's own", async () => {
    const planOfA = items.plan?.split('/').pop();
    expect(await ids('/v1/plans', 'resellerA')).toEqual(expect.arrayContaining([w.plan.id, planOfA]));
    expect(await ids('/v1/plans', 'resellerB')).not.toContain(planOfA);
    expect(await ids('/v1/plans', 'accountA')).toContain(planOfA);
  });

  it('tokens, operations and events', async () => {
    const tokensB = await t.get('/v1/tokens?limit=200', w.tokenB);
    expect(
      tokensB.body.data.every((x: { principal: { id: string } }) => [w.resellerB.id, w.accountB.id].includes(x.principal.id)),
    ).toBe(true);
    const tokensAcc = await t.get('/v1/tokens?limit=200', w.tokenAccountA);
    expect(tokensAcc.body.data.every((x: { principal: { id: string } }) => x.principal.id === w.accountA.id)).toBe(true);
    expect(await ids('/v1/operations', 'resellerB')).toEqual([]);
    const eventsAcc = await t.get('/v1/events?limit=200', w.tokenAccountA);
    expect(eventsAcc.body.data.every((e: { account_id: string }) => e.account_id === w.accountA.id)).toBe(true);
  });
});

describe('writes', () => {
  it('a read-only token is 403 insufficient_scope on reachable items, 404 elsewhere', async () => {
    const mine = await t.request('PATCH', `/v1/accounts/${w.accountA.id}`, { body: { display_name: 'x' }, token: w.readOnly });
    expect(mine.status).toBe(403);
    expect(mine.body).toMatchObject({ code: 'insufficient_scope', scope: 'accounts:write' });
    const theirs = await t.request('PATCH', `/v1/accounts/${w.accountB.id}`, { body: { display_name: 'x' }, token: w.readOnly });
    expect(theirs.status).toBe(404);
    expect(
      (await t.post('/v1/accounts', { username: 'nope1', contact_email: 'x@example.com', plan_id: w.plan.id }, w.readOnly))
        .status,
    ).toBe(403);
    expect((await t.request('DELETE', `/v1/resellers/${w.resellerA.id}`, { token: w.readOnly })).status).toBe(403);
  });

  it("reseller B cannot touch reseller A's things", async () => {
    for (const [method, url, body] of [
      ['PATCH', `/v1/accounts/${w.accountA.id}`, { display_name: 'x' }],
      ['DELETE', `/v1/accounts/${w.accountA.id}`, undefined],
      ['POST', `/v1/accounts/${w.accountA.id}/suspend`, { reason: 'x' }],
      ['PATCH', items.plan, { description: 'x' }],
      ['DELETE', items.token, undefined],
      ['PATCH', `/v1/resellers/${w.resellerA.id}`, { name: 'x' }],
    ] as const) {
      const r = await t.request(method, url as string, { body, token: w.tokenB });
      expect(r.status, `${method} ${url}`).toBe(404);
    }
  });

  it('resellers cannot change themselves or global plans; accounts cannot create plans', async () => {
    expect(
      (await t.request('PATCH', `/v1/resellers/${w.resellerA.id}`, { body: { max_accounts: 1000 }, token: w.tokenA })).body.code,
    ).toBe('forbidden');
    expect((await t.request('PATCH', `/v1/plans/${w.plan.id}`, { body: { max_sites: 1000 }, token: w.tokenA })).body.code).toBe(
      'forbidden',
    );
    const accPlan = await t.post(
      '/v1/plans',
      {
        name: 'mine',
        max_sites: 1,
        max_domains: 1,
        max_email_accounts: 1,
        max_email_quota_mb: 1,
        disk_quota_mb: 1,
        max_backups: 1,
        max_dns_records_per_domain: 1,
      },
      w.tokenAccountA,
    );
    expect(accPlan.body.code).toBe('forbidden');
    expect((await t.post('/v1/resellers', { name: 'x', contact_email: 'x@example.com' }, w.tokenA)).body.code).toBe('forbidden');
  });

  it('a token narrowed to account A by a reseller cannot create accounts', async () => {
    const narrowed = await createToken(t, { account_ids: [w.accountA.id] }, w.tokenA);
    expect(
      (await t.post('/v1/accounts', { username: 'narrowx', contact_email: 'x@example.com', plan_id: w.plan.id }, narrowed)).body
        .code,
    ).toBe('forbidden');
  });
});
