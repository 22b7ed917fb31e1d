import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { world } from '../helpers/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('smoke', () => {
  it('builds a world', async () => {
    const w = await world(t);
    const r = await t.get('/v1/accounts', w.tokenA);
    expect(r.status).toBe(200);
    expect(r.body.data.map((a: { id: string }) => a.id)).toEqual([w.accountA.id]);
  });
});
