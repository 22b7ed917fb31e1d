import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

let t: TestApp;
let account: { id: string };
let n = 0;
beforeAll(async () => {
  t = await createTestApp();
  account = await createAccount(t, (await createPlan(t, undefined, { max_domains: 100, max_dns_records_per_domain: 20000 })).id);
});
afterAll(async () => t.close());

async function zone() {
  const r = await t.post('/v1/domains', { account_id: account.id, name: `sync${n++}.net`, template: 'empty' });
  return r.body as { id: string; name: string; version: number; dns: { serial: number } };
}
const sync = (z: { name: string }, records: unknown[], etag?: number | string, query = '') =>
  t.request('PUT', `/v1/domains/${z.name}/records${query}`, {
    body: { records },
    headers: etag === undefined ? {} : { 'if-match': typeof etag === 'number' ? `"${etag}"` : etag },
  });
const owners = async (z: { id: string }) =>
  (await t.get(`/v1/domains/${z.id}/records?limit=200`)).body.data
    .filter((r: { managed: boolean }) => !r.managed)
    .map((r: { name: string; type: string; ttl: number; content: string }) => `${r.name} ${r.type} ${r.ttl} ${r.content}`)
    .sort();

describe('PUT /v1/domains/{domain}/records (sync)', () => {
  it('needs If-Match: 428 without, 412 when stale', async () => {
    const z = await zone();
    const missing = await sync(z, []);
    expect(missing.status).toBe(428);
    expect(missing.body.code).toBe('precondition_required');
    expect((await sync(z, [], z.version + 5)).status).toBe(412);
  });

  it('computes the diff, applies it atomically with one serial bump, and answers the new ETag', async () => {
    const z = await zone();
    const first = await sync(
      z,
      [
        { name: 'www', type: 'A', content: '192.0.2.1' },
        { name: '@', type: 'MX', ttl: 300, content: '10 mail.example.net.' },
        { name: 'old', type: 'TXT', content: 'goes away' },
      ],
      z.version,
    );
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ unchanged: 0, serial: z.dns.serial + 1, dry_run: false });
    expect(first.body.created).toHaveLength(3);
    expect(first.headers.etag).toBe(`"${first.body.zone_version}"`);

    const second = await sync(
      z,
      [
        { name: 'www', type: 'A', content: '192.0.2.1' },
        { name: '@', type: 'MX', ttl: 600, content: '10 mail.example.net.' },
        { name: 'new', type: 'AAAA', content: '2001:db8::1' },
      ],
      String(first.headers.etag),
    );
    expect(second.body).toMatchObject({
      created: [{ name: 'new', type: 'AAAA', ttl: 3600, content: '2001:db8::1' }],
      updated: [{ name: '@', type: 'MX', ttl: 600, content: '10 mail.example.net.' }],
      deleted: [{ name: 'old', type: 'TXT', ttl: 3600, content: 'goes away' }],
      unchanged: 1,
      serial: z.dns.serial + 2,
    });
    expect(await owners(z)).toEqual(['@ MX 600 10 mail.example.net.', 'new AAAA 3600 2001:db8::1', 'www A 3600 192.0.2.1']);
    const ns = (await t.get(`/v1/domains/${z.id}/records?type=NS`)).body.data;
    expect(ns.length).toBeGreaterThan(0);
  });

  it('an identical set changes nothing and keeps the serial', async () => {
    const z = await zone();
    const set = [{ name: 'a', type: 'A', content: '192.0.2.1' }];
    const first = await sync(z, set, z.version);
    const again = await sync(z, set, first.body.zone_version);
    expect(again.body).toMatchObject({
      created: [],
      updated: [],
      deleted: [],
      unchanged: 1,
      serial: first.body.serial,
      zone_version: first.body.zone_version,
    });
  });

  it('dry_run answers the diff and changes nothing', async () => {
    const z = await zone();
    const r = await sync(z, [{ name: 'a', type: 'A', content: '192.0.2.1' }], z.version, '?dry_run=true');
    expect(r.body).toMatchObject({ dry_run: true, created: [{ name: 'a' }], serial: z.dns.serial });
    expect(await owners(z)).toEqual([]);
    expect((await t.get(`/v1/domains/${z.id}`)).body.version).toBe(z.version);
  });

  it('all or nothing: one bad record refuses the whole set, with pointers into it', async () => {
    const z = await zone();
    const r = await sync(
      z,
      [
        { name: 'ok', type: 'A', content: '192.0.2.1' },
        { name: 'bad', type: 'A', content: 'nope' },
        { name: '@', type: 'CNAME', content: 'x.example.net.' },
        { name: 'ttl', type: 'A', ttl: 300, content: '192.0.2.1' },
        { name: 'ttl', type: 'A', ttl: 600, content: '192.0.2.2' },
      ],
      z.version,
    );
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/records/1/content', '/records/2/name']);
    const ttl = await sync(
      z,
      [
        { name: 'ttl', type: 'A', ttl: 300, content: '192.0.2.1' },
        { name: 'ttl', type: 'A', ttl: 600, content: '192.0.2.2' },
      ],
      z.version,
    );
    expect(ttl.body.errors.map((e: { pointer: string; code: string }) => `${e.pointer} ${e.code}`)).toEqual([
      '/records/0/ttl ttl_mismatch',
      '/records/1/ttl ttl_mismatch',
    ]);
    expect(await owners(z)).toEqual([]);
  });

  it('managed records cannot be part of the set', async () => {
    const z = await zone();
    const r = await sync(z, [{ name: '@', type: 'NS', content: 'ns9.example.net.' }], z.version);
    expect(r.body.errors[0]).toMatchObject({ pointer: '/records/0/name', code: 'managed' });
  });

  it('two clients racing with the same ETag: exactly one wins', async () => {
    const z = await zone();
    const results = await Promise.all([
      sync(z, [{ name: 'a', type: 'A', content: '192.0.2.1' }], z.version),
      sync(z, [{ name: 'b', type: 'A', content: '192.0.2.2' }], z.version),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
    expect((await owners(z)).length).toBe(1);
  });

  it('syncs a zone of 2,000 records in one request', async () => {
    const z = await zone();
    const records = Array.from({ length: 2000 }, (_, i) => ({
      name: `h${i}`,
      type: 'A',
      content: `10.0.${Math.floor(i / 250)}.${i % 250}`,
    }));
    const r = await sync(z, records, z.version);
    expect(r.status).toBe(200);
    expect(r.body.created).toHaveLength(2000);
    expect((await t.get(`/v1/domains/${z.id}`)).body.dns.record_count).toBe(2000 + 3);
  });
});
