import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createToken, createAccountOnNewPlan } from '../helpers/fixtures.js';

let t: TestApp;
let account: { id: string };
let n = 0;
beforeAll(async () => {
  t = await createTestApp({ env: { BERTH_NAMESERVERS: 'ns1.host.example.net,ns2.host.example.net' } });
  account = await createAccount(t, (await createPlan(t, undefined, { max_domains: 100 })).id);
});
afterAll(async () => t.close());

async function zone(extra: Record<string, unknown> = {}) {
  const r = await t.post('/v1/domains', { account_id: account.id, name: `zone${n++}.com`, template: 'empty', ...extra });
  expect(r.status).toBe(201);
  return r.body as { id: string; name: string; version: number; dns: { serial: number } };
}
const add = (domain: string, body: Record<string, unknown>, token?: string) =>
  t.post(`/v1/domains/${domain}/records`, body, token);

describe('record writes', () => {
  it('POST adds a record, bumps the serial once and emits dns.zone.changed', async () => {
    const z = await zone();
    const r = await add(z.name, { name: 'www', type: 'A', content: '192.0.2.7' });
    expect(r.status).toBe(201);
    expect(r.headers.location).toBe(`/v1/domains/${z.id}/records/${r.body.id}`);
    expect(r.body).toMatchObject({
      name: 'www',
      fqdn: `www.${z.name}.`,
      type: 'A',
      ttl: 3600,
      content: '192.0.2.7',
      managed: false,
      version: 1,
    });
    const after = await t.get(`/v1/domains/${z.id}`);
    expect(after.body.dns.serial).toBe(z.dns.serial + 1);
    expect(after.body.version).toBe(z.version + 1);
    const soa = (await t.get(`/v1/domains/${z.id}/records?type=SOA`)).body.data[0];
    expect(soa.content).toContain(` ${z.dns.serial + 1} `);
    const changed = (await t.get(`/v1/events?resource_id=${z.id}&type=dns.zone.changed`)).body.data[0];
    expect(changed.data).toMatchObject({ serial: z.dns.serial + 1, created: 1, updated: 0, deleted: 0 });
    expect((await t.get(`/v1/domains/${z.name}/zone`)).text).toContain('www\t3600\tIN\tA\t192.0.2.7');
  });

  it('Unicode owner names and targets are stored as A-labels and returned in both forms (UTS 46)', async () => {
    const r = await t.post('/v1/domains', { account_id: account.id, name: `bücher-shop${n++}.de`, template: 'empty' });
    expect(r.status).toBe(201);
    const zoneName = r.body.name as string;
    const unicodeZone = r.body.unicode_name as string;
    expect(zoneName).toMatch(/^xn--/);
    const owner = await add(zoneName, { name: 'Bücher', type: 'A', content: '192.0.2.7' });
    expect(owner.status).toBe(201);
    expect(owner.body).toMatchObject({ name: 'xn--bcher-kva', unicode_name: 'bücher', fqdn: `xn--bcher-kva.${zoneName}.` });
    // An absolute name in Unicode is inside the zone whose A-label it is.
    const absolute = await add(zoneName, { name: `www.${unicodeZone}.`, type: 'CNAME', content: `shop.${unicodeZone}.` });
    expect(absolute.status).toBe(201);
    expect(absolute.body).toMatchObject({
      name: 'www',
      content: `shop.${zoneName}.`,
      unicode_content: `shop.${unicodeZone}.`,
    });
    const mx = await add(zoneName, { name: '@', type: 'MX', content: '10 post.bücher.de.' });
    expect(mx.body).toMatchObject({ content: '10 post.xn--bcher-kva.de.', unicode_content: '10 post.bücher.de.' });
    const byName = await t.get(`/v1/domains/${zoneName}/records?name=${encodeURIComponent('Bücher')}`);
    expect(byName.body.data.map((x: { id: string }) => x.id)).toEqual([owner.body.id]);
    // A TXT record is text: nothing in it is decoded.
    const txt = await add(zoneName, { name: 'txt', type: 'TXT', content: 'xn--bcher-kva' });
    expect(txt.body.unicode_content).toBe('xn--bcher-kva');
    const bad = await add(zoneName, { name: 'a\u0000b', type: 'A', content: '192.0.2.7' });
    expect(bad.status).toBe(422);
  });

  it('every field failure comes back at once with pointers, and nothing is written', async () => {
    const z = await zone();
    const r = await add(z.name, { name: 'a*b', type: 'A', content: 'not-an-ip', ttl: 10 });
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/ttl']);
    const r2 = await add(z.name, { name: '@', type: 'CNAME', content: '1.2.3.4' });
    expect(r2.body.errors.map((e: { code: string }) => e.code)).toEqual(['cname_at_apex', 'invalid_target']);
    expect((await t.get(`/v1/domains/${z.id}`)).body.dns.serial).toBe(z.dns.serial);
  });

  it('set rules are checked against the zone', async () => {
    const z = await zone();
    await add(z.name, { name: 'www', type: 'A', content: '192.0.2.1', ttl: 300 });
    const ttl = await add(z.name, { name: 'www', type: 'A', content: '192.0.2.2', ttl: 600 });
    expect(ttl.body.errors[0]).toMatchObject({ pointer: '/ttl', code: 'ttl_mismatch' });
    expect((await add(z.name, { name: 'www', type: 'A', content: '192.0.2.1', ttl: 300 })).body.errors[0].code).toBe('duplicate');
    expect((await add(z.name, { name: 'www', type: 'CNAME', content: 'example.com.' })).body.errors[0].code).toBe(
      'cname_conflict',
    );
    await add(z.name, { name: 'alias', type: 'CNAME', content: `www.${z.name}.` });
    expect((await add(z.name, { name: '@', type: 'MX', content: `10 alias.${z.name}.` })).body.errors[0].code).toBe(
      'target_is_cname',
    );
    await add(z.name, { name: '@', type: 'TXT', content: 'v=spf1 mx -all' });
    expect((await add(z.name, { name: '@', type: 'TXT', content: 'v=spf1 a -all' })).body.errors[0].code).toBe('duplicate_spf');
  });

  it('content of any length the API accepts is stored (a B-tree key holds ~2,700 bytes: long content is keyed by its MD5)', async () => {
    const z = await zone();
    // Random, so that no compression brings it under the key's limit (as it did repeated text).
    const long = randomBytes(45_000).toString('base64');
    const r = await add(z.name, { name: 'big', type: 'TXT', content: long });
    expect(r.status).toBe(201);
    expect(r.body.content).toBe(long);
    const moved = await t.request('PATCH', `/v1/domains/${z.id}/records/${r.body.id}`, { body: { content: long.slice(1) } });
    expect(moved.body.content).toBe(long.slice(1));
    expect((await add(z.name, { name: 'big', type: 'TXT', content: long.slice(1) })).body.errors[0].code).toBe('duplicate');
    expect((await add(z.name, { name: 'big', type: 'TXT', content: long })).status).toBe(201);
    // A short content made to equal a long one's key: only on purpose, and a 409, never a 500.
    const md5 = createHash('md5').update(long).digest('hex');
    const twin = await add(z.name, { name: 'big', type: 'TXT', content: `md5:${md5}` });
    expect(twin.status).toBe(409);
    expect(twin.body.code).toBe('already_exists');
    const zoneFile = (await t.get(`/v1/domains/${z.id}/zone`)).text;
    expect(zoneFile).toContain(`"${long.slice(0, 255)}" "${long.slice(255, 510)}"`);
  });

  it('SOA and apex NS are managed: no adding, changing or deleting them', async () => {
    const z = await zone();
    expect((await add(z.name, { name: '@', type: 'NS', content: 'ns9.other.net.' })).body.errors[0].code).toBe('managed');
    expect((await add(z.name, { name: '@', type: 'SOA', content: 'x' })).status).toBe(422);
    const ns = (await t.get(`/v1/domains/${z.id}/records?type=NS`)).body.data[0];
    const patch = await t.request('PATCH', `/v1/domains/${z.id}/records/${ns.id}`, { body: { content: 'ns9.other.net.' } });
    expect(patch.status).toBe(422);
    expect(patch.body.errors[0].code).toBe('managed');
    expect((await t.request('DELETE', `/v1/domains/${z.id}/records/${ns.id}`)).status).toBe(422);
  });

  it('PUT, PATCH and DELETE with If-Match on the record', async () => {
    const z = await zone();
    const rec = (await add(z.name, { name: 'api', type: 'A', content: '192.0.2.1' })).body;
    const put = await t.request('PUT', `/v1/domains/${z.name}/records/${rec.id}`, {
      body: { name: 'api', type: 'A', ttl: 600, content: '192.0.2.9' },
      headers: { 'if-match': `"${rec.version}"` },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ ttl: 600, content: '192.0.2.9', version: rec.version + 1 });
    const stale = await t.request('PATCH', `/v1/domains/${z.name}/records/${rec.id}`, {
      body: { ttl: 900 },
      headers: { 'if-match': `"${rec.version}"` },
    });
    expect(stale.status).toBe(412);
    const patch = await t.request('PATCH', `/v1/domains/${z.name}/records/${rec.id}`, {
      raw: JSON.stringify({ content: '192.0.2.10' }),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(patch.body).toMatchObject({ ttl: 600, content: '192.0.2.10' });
    expect((await t.request('DELETE', `/v1/domains/${z.name}/records/${rec.id}`)).status).toBe(204);
    expect((await t.get(`/v1/domains/${z.name}/records/${rec.id}`)).status).toBe(404);
    const serial = (await t.get(`/v1/domains/${z.id}`)).body.dns.serial;
    expect(serial).toBe(z.dns.serial + 4); // add, PUT, PATCH, DELETE: one bump each
  });

  it('two writers with the same record ETag: exactly one wins', async () => {
    const z = await zone();
    const rec = (await add(z.name, { name: 'race', type: 'A', content: '192.0.2.1' })).body;
    const headers = { 'if-match': `"${rec.version}"` };
    const results = await Promise.all([
      t.request('PATCH', `/v1/domains/${z.name}/records/${rec.id}`, { body: { content: '192.0.2.2' }, headers }),
      t.request('PATCH', `/v1/domains/${z.name}/records/${rec.id}`, { body: { content: '192.0.2.3' }, headers }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
  });

  it('writers into one zone at once: each counted once in the serial and the feed, a refused one rolled back alone', async () => {
    const z = await zone();
    expect((await add(z.name, { name: 'taken', type: 'A', content: '192.0.2.9' })).status).toBe(201);
    // Sent together, they wait in the zone's line and commit as groups: the refused ones (a
    // duplicate, a CNAME beside other data) are among them.
    const bodies = Array.from({ length: 12 }, (_, i) =>
      i === 4
        ? { name: 'taken', type: 'A', content: '192.0.2.9' }
        : i === 8
          ? { name: 'taken', type: 'CNAME', content: 'elsewhere.example.' }
          : { name: `w${i}`, type: 'A', content: `192.0.2.${i + 10}` },
    );
    const answers = await Promise.all(bodies.map((b) => add(z.name, b)));
    expect(answers.map((r) => r.status)).toEqual(bodies.map((_, i) => (i === 4 || i === 8 ? 422 : 201)));
    const after = (await t.get(`/v1/domains/${z.id}`)).body;
    expect(after.dns.serial).toBe(z.dns.serial + 11);
    const changes = (await t.get(`/v1/events?resource_id=${z.id}&type=dns.zone.changed&limit=100`)).body.data as {
      data: { serial: number; created: number };
    }[];
    // The zone's creation, `taken`, and the ten written together: each serial once.
    expect(changes.map((e) => e.data.serial).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 12 }, (_, i) => z.dns.serial + i),
    );
    const names = (await t.get(`/v1/domains/${z.id}/records?type=A&limit=100`)).body.data.map((r: { name: string }) => r.name);
    expect(names.sort()).toEqual(['taken', ...bodies.filter((_, i) => i !== 4 && i !== 8).map((b) => b.name)].sort());
  });

  it('a write the database refuses among writers at once is answered alone: the others are written, each once', async () => {
    const z = await zone();
    const long = randomBytes(3_000).toString('base64');
    expect((await add(z.name, { name: 'big', type: 'TXT', content: long })).status).toBe(201);
    // Its key's twin passes the zone's checks and is refused by the unique key only (as above).
    const twin = { name: 'big', type: 'TXT', content: `md5:${createHash('md5').update(long).digest('hex')}` };
    const bodies = Array.from({ length: 8 }, (_, i) =>
      i === 3 ? twin : { name: `v${i}`, type: 'A', content: `192.0.2.${i + 1}` },
    );
    const answers = await Promise.all(bodies.map((b) => add(z.name, b)));
    expect(answers.map((r) => r.status)).toEqual(bodies.map((_, i) => (i === 3 ? 409 : 201)));
    expect(answers[3]!.body.code).toBe('already_exists');
    expect((await t.get(`/v1/domains/${z.id}`)).body.dns.serial).toBe(z.dns.serial + 8);
    const names = (await t.get(`/v1/domains/${z.id}/records?type=A&limit=100`)).body.data.map((r: { name: string }) => r.name);
    expect(names.sort()).toEqual(['v0', 'v1', 'v2', 'v4', 'v5', 'v6', 'v7']);
  });

  it('max_dns_records_per_domain is a 403 quota_exceeded', async () => {
    const small = await createAccount(t, (await createPlan(t, undefined, { max_dns_records_per_domain: 1 })).id);
    const d = (await t.post('/v1/domains', { account_id: small.id, name: 'tiny-zone.com', template: 'empty' })).body;
    expect((await add(d.name, { name: 'a', type: 'A', content: '192.0.2.1' })).status).toBe(201);
    const r = await add(d.name, { name: 'b', type: 'A', content: '192.0.2.2' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'quota_exceeded', limit: 1, usage: 2 });
  });

  it("needs dns:write; other accounts' zones are 404", async () => {
    const z = await zone();
    const readOnly = await createToken(t, { scopes: ['dns:read', 'domains:read'] });
    const r = await add(z.name, { name: 'x', type: 'A', content: '192.0.2.1' }, readOnly);
    expect(r.body).toMatchObject({ code: 'insufficient_scope', scope: 'dns:write' });
    const other = await createAccountOnNewPlan(t);
    const stranger = await createToken(t, { principal: { kind: 'account', id: other.id } });
    expect((await add(z.name, { name: 'x', type: 'A', content: '192.0.2.1' }, stranger)).status).toBe(404);
  });
});
