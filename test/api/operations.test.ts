import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';
import { createAccount, createPlan, createToken, world } from '../helpers/fixtures.js';
import { testDir } from '../helpers/temp-dir.js';

let shared: Awaited<ReturnType<typeof freshDb>>;
beforeAll(async () => {
  shared = await freshDb();
});
afterAll(async () => {
  await shared.db.close();
  await shared.drop();
});

describe('operations', () => {
  it('a queued termination can be canceled; the account gets its status back', async () => {
    const t = await createTestApp({ db: shared.db, jobs: false });
    try {
      const plan = await createPlan(t);
      const acc = await createAccount(t, plan.id);
      await t.post(`/v1/accounts/${acc.id}/suspend`, { reason: 'abuse' });
      const del = await t.request('DELETE', `/v1/accounts/${acc.id}`);
      const opId = del.body.operation.id;
      expect((await t.get(`/v1/operations/${opId}`)).body.status).toBe('queued');
      const readOnly = await createToken(t, { scopes: ['accounts:read'] });
      const denied = await t.post(`/v1/operations/${opId}/cancel`, undefined, readOnly);
      expect(denied.status).toBe(403);
      expect(denied.body.scope).toBe('accounts:write');
      const c = await t.post(`/v1/operations/${opId}/cancel`);
      expect(c.status).toBe(200);
      expect(c.body).toMatchObject({ status: 'canceled' });
      expect(c.body.finished_at).not.toBeNull();
      expect((await t.get(`/v1/accounts/${acc.id}`)).body.status).toBe('suspended');
      const again = await t.post(`/v1/operations/${opId}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('invalid_state');
      // The scope is checked before the state: a read-only token learns nothing from a 409.
      const readOnlyAgain = await t.post(`/v1/operations/${opId}/cancel`, undefined, readOnly);
      expect(readOnlyAgain.status).toBe(403);
      expect(readOnlyAgain.body.code).toBe('insufficient_scope');
      const list = await t.get(`/v1/operations?resource_id=${acc.id}&status=canceled`);
      expect(list.body.data.map((o: { id: string }) => o.id)).toEqual([opId]);
    } finally {
      await t.close();
    }
  });

  it('a termination queued before a restart completes after it', async () => {
    const dataDir = testDir('restart');
    const before = await createTestApp({ db: shared.db, jobs: false, dataDir });
    const plan = await createPlan(before);
    const acc = await createAccount(before, plan.id);
    const opId = (await before.request('DELETE', `/v1/accounts/${acc.id}`)).body.operation.id;
    await before.close();

    const after = await createTestApp({ db: shared.db, dataDir });
    try {
      await eventually(async () => (await after.get(`/v1/operations/${opId}`)).body.status === 'succeeded');
      expect((await after.get(`/v1/accounts/${acc.id}`)).status).toBe(404);
    } finally {
      await after.close();
    }
  });
});

describe('reach of operations and events', () => {
  it('each principal sees only the operations and events of its accounts', async () => {
    const t = await createTestApp({ db: shared.db, jobs: false });
    try {
      const w = await world(t);
      const opA = (await t.request('DELETE', `/v1/accounts/${w.accountA.id}`, { token: w.tokenA })).body.operation.id;
      expect((await t.get(`/v1/operations/${opA}`, w.tokenA)).status).toBe(200);
      expect((await t.get(`/v1/operations/${opA}`, w.tokenAccountA)).status).toBe(200);
      expect((await t.get(`/v1/operations/${opA}`, w.tokenB)).status).toBe(404);
      expect((await t.post(`/v1/operations/${opA}/cancel`, undefined, w.tokenB)).status).toBe(404);
      const eventsB = await t.get('/v1/events?limit=200', w.tokenB);
      expect(eventsB.body.data.length).toBeGreaterThan(0);
      expect(
        eventsB.body.data.every((e: { account_id: string | null }) => e.account_id === null || e.account_id === w.accountB.id),
      ).toBe(true);
      const createdA = (await t.get(`/v1/events?resource_id=${w.accountA.id}`, w.tokenA)).body.data.at(-1);
      expect((await t.get(`/v1/events/${createdA.id}`, w.tokenA)).status).toBe(200);
      expect((await t.get(`/v1/events/${createdA.id}`, w.tokenB)).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
