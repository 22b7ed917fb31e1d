import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

let t: TestApp;
let account: { id: string };
let n = 0;
beforeAll(async () => {
  t = await createTestApp();
  account = await createAccount(t, (await createPlan(t, undefined, { max_domains: 100 })).id);
});
afterAll(async () => t.close());

async function zone(app = t, acc = account) {
  const r = await app.post('/v1/domains', { account_id: acc.id, name: `changes${n++}.org`, template: 'empty' });
  return r.body as { id: string; name: string; version: number; dns: { serial: number } };
}
const soon = (ms: number) => new Date(Date.now() + ms).toISOString();
const names = async (app: TestApp, z: { id: string }) =>
  (await app.get(`/v1/domains/${z.id}/records?limit=200`)).body.data
    .filter((r: { managed: boolean }) => !r.managed)
    .map((r: { name: string; type: string; content: string }) => `${r.name} ${r.type} ${r.content}`)
    .sort();

describe('change sets applied now', () => {
  it('create, update and delete atomically with one serial bump', async () => {
    const z = await zone();
    const a = (await t.post(`/v1/domains/${z.name}/records`, { name: 'a', type: 'A', content: '192.0.2.1' })).body;
    const b = (await t.post(`/v1/domains/${z.name}/records`, { name: 'b', type: 'A', content: '192.0.2.2' })).body;
    const before = (await t.get(`/v1/domains/${z.id}`)).body.dns.serial;
    const r = await t.post(`/v1/domains/${z.name}/changes`, {
      create: [{ name: 'c', type: 'TXT', content: 'hello' }],
      update: [{ id: a.id, content: '192.0.2.9' }],
      delete: [b.id],
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'applied', result: { created: 1, updated: 1, deleted: 1, serial: before + 1 } });
    expect(r.headers.location).toBe(`/v1/domains/${z.id}/changes/${r.body.id}`);
    expect(await names(t, z)).toEqual(['a A 192.0.2.9', 'c TXT hello']);
    const events = (await t.get(`/v1/events?resource_id=${r.body.id}`)).body.data.map((e: { type: string }) => e.type);
    expect(events).toEqual(['dns.change.applied']);
    expect((await t.get(`/v1/domains/${z.name}/changes/${r.body.id}`)).body.id).toBe(r.body.id);
  });

  it('all or nothing, with pointers into the set', async () => {
    const z = await zone();
    const r = await t.post(`/v1/domains/${z.name}/changes`, {
      create: [
        { name: 'ok', type: 'A', content: '192.0.2.1' },
        { name: 'bad', type: 'A', content: 'x' },
      ],
      update: [{ id: 'rec_01jd3x9v6ef8tb2q4w5n7k8m9p', ttl: 600 }],
      delete: ['rec_01jd3x9v6ef8tb2q4w5n7k8m9q'],
    });
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/create/1/content', '/update/0/id', '/delete/0']);
    expect(await names(t, z)).toEqual([]);
  });

  it('dry_run validates only', async () => {
    const z = await zone();
    const r = await t.post(`/v1/domains/${z.name}/changes?dry_run=true`, {
      create: [{ name: 'x', type: 'A', content: '192.0.2.1' }],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ dry_run: true, result: { created: 1, updated: 0, deleted: 0 } });
    expect(await names(t, z)).toEqual([]);
    expect((await t.get(`/v1/domains/${z.name}/changes`)).body.data).toEqual([]);
  });
});

describe('scheduled change sets', () => {
  it('are validated now, scheduled, and applied at apply_at', async () => {
    const z = await zone();
    const r = await t.post(`/v1/domains/${z.name}/changes`, {
      create: [{ name: 'later', type: 'A', content: '192.0.2.5' }],
      apply_at: soon(1500),
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'scheduled', result: null });
    expect(await names(t, z)).toEqual([]);
    const done = await eventually(async () => {
      const c = await t.get(`/v1/domains/${z.name}/changes/${r.body.id}`);
      return c.body.status === 'applied' ? c.body : null;
    });
    expect(done.result).toMatchObject({ created: 1 });
    expect(await names(t, z)).toEqual(['later A 192.0.2.5']);
    const types = (await t.get(`/v1/events?resource_id=${r.body.id}`)).body.data.map((e: { type: string }) => e.type);
    expect(types).toEqual(['dns.change.applied', 'dns.change.scheduled']);
  });

  it('that no longer validate when due are failed with the problem', async () => {
    const z = await zone();
    const r = await t.post(`/v1/domains/${z.name}/changes`, {
      create: [{ name: 'www', type: 'CNAME', content: 'example.net.' }],
      apply_at: soon(1500),
    });
    expect(r.body.status).toBe('scheduled');
    await t.post(`/v1/domains/${z.name}/records`, { name: 'www', type: 'A', content: '192.0.2.1' });
    const failed = await eventually(async () => {
      const c = await t.get(`/v1/domains/${z.name}/changes/${r.body.id}`);
      return c.body.status === 'failed' ? c.body : null;
    });
    expect(failed.error).toMatchObject({
      code: 'validation_failed',
      errors: [{ pointer: '/create/0/name', code: 'cname_conflict' }],
    });
    expect((await t.get(`/v1/events?resource_id=${r.body.id}`)).body.data[0].type).toBe('dns.change.failed');
  });

  it('can be canceled while scheduled, not after', async () => {
    const z = await zone();
    const r = await t.post(`/v1/domains/${z.name}/changes`, {
      create: [{ name: 'never', type: 'A', content: '192.0.2.1' }],
      apply_at: soon(60_000),
    });
    const c = await t.request('DELETE', `/v1/domains/${z.name}/changes/${r.body.id}`);
    expect(c.status).toBe(200);
    expect(c.body.status).toBe('canceled');
    expect((await t.request('DELETE', `/v1/domains/${z.name}/changes/${r.body.id}`)).body.code).toBe('invalid_state');
    expect((await t.get(`/v1/domains/${z.name}/changes?status=canceled`)).body.data.map((x: { id: string }) => x.id)).toEqual([
      r.body.id,
    ]);
  });

  it('are applied exactly once with two server processes on one database', async () => {
    const shared = await freshDb();
    const a = await createTestApp({ db: shared.db });
    const b = await createTestApp({ db: shared.db });
    try {
      const acc = await createAccount(a, (await createPlan(a)).id);
      const z = await zone(a, acc);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await a.post(`/v1/domains/${z.name}/changes`, {
          create: [{ name: `s${i}`, type: 'A', content: `192.0.2.${i + 1}` }],
          apply_at: soon(1500),
        });
        ids.push(r.body.id);
      }
      await eventually(async () => {
        const list = (await b.get(`/v1/domains/${z.name}/changes?status=applied`)).body.data;
        return list.length === 3;
      });
      const applied = (await a.get(`/v1/events?type=dns.change.applied&limit=200`)).body.data.filter(
        (e: { resource: { id: string } }) => ids.includes(e.resource.id),
      );
      expect(applied).toHaveLength(3);
      expect((await a.get(`/v1/domains/${z.id}`)).body.dns.serial).toBe(z.dns.serial + 3);
    } finally {
      await a.close();
      await b.close();
      await shared.db.close();
      await shared.drop();
    }
  }, 180_000);
});
