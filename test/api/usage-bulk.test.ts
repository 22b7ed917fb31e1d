import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createReseller, createToken } from '../helpers/fixtures.js';

/** `GET /v1/usage`: every reachable account's usage as the meter last measured it, for a billing system's daily update. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { BERTH_USAGE_METER_MS: '100' } });
});
afterAll(async () => t.close());

type Record_ = { id: string; usage: { domains: number } | null; updated_at: string | null; reseller_id: string | null };
const page = async (query: string, token?: string) =>
  (await t.get(`/v1/usage${query}`, token)).body as { data: Record_[]; next_cursor: string | null };

describe('usage in bulk', () => {
  it('pages the reachable accounts with their measured usage; updated_since keeps those whose usage changed', async () => {
    const reseller = await createReseller(t);
    const resellerToken = await createToken(t, { principal: { kind: 'reseller', id: reseller.id } });
    const plan = await createPlan(t, resellerToken);
    const a = await createAccount(t, plan.id, resellerToken);
    const b = await createAccount(t, plan.id, resellerToken);
    const outsider = await createAccount(t, (await createPlan(t)).id);
    expect((await t.post('/v1/domains', { account_id: a.id, name: 'usage-a.com' })).status).toBe(201);
    // The test's clock stands still: it is moved on by the meter's period as the test waits.
    const measured = await eventually(async () => {
      t.clock.advance(100);
      const r = (await page(`?reseller_id=${reseller.id}`)).data.find((x) => x.id === a.id);
      return r?.usage?.domains === 1 && r;
    });
    expect(measured).toMatchObject({ reseller_id: reseller.id, usage: { domains: 1, sites: 0, email_accounts: 0 } });
    // Measured in the same tick, each account with its own figures.
    const other = (await page(`?reseller_id=${reseller.id}`)).data.find((x) => x.id === b.id);
    expect(other?.usage).toMatchObject({ domains: 0, sites: 0 });

    // What changed since: b's new domain, not a (measured again, unchanged).
    t.clock.advance(60_000);
    const since = t.clock.now().toISOString();
    expect((await t.post('/v1/domains', { account_id: b.id, name: 'usage-b.com' })).status).toBe(201);
    await eventually(async () => {
      t.clock.advance(100);
      return (await page(`?updated_since=${encodeURIComponent(since)}`)).data.some(
        (x) => x.id === b.id && x.usage?.domains === 1,
      );
    });
    const changed = (await page(`?reseller_id=${reseller.id}&updated_since=${encodeURIComponent(since)}`)).data.map((x) => x.id);
    expect(changed).toEqual([b.id]);

    // A reseller reaches its own accounts alone, a page at a time; an account token its own.
    const first = await page('?limit=1', resellerToken);
    expect(first.data).toHaveLength(1);
    const second = await page(`?limit=1&cursor=${first.next_cursor}`, resellerToken);
    expect([...first.data, ...second.data].map((x) => x.id).sort()).toEqual([a.id, b.id].sort());
    expect(second.next_cursor).toBeNull();
    const own = await createToken(t, { principal: { kind: 'account', id: outsider.id } });
    expect((await page('', own)).data.map((x) => x.id)).toEqual([outsider.id]);
    const bad = await t.get('/v1/usage?updated_since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('malformed_request');
  });
});
