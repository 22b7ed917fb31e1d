import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/zones', name), 'utf8');

let t: TestApp;
let account: { id: string };
beforeAll(async () => {
  t = await createTestApp({ env: { BERTH_NAMESERVERS: 'ns1.host.example.net,ns2.host.example.net' } });
  account = await createAccount(t, (await createPlan(t, undefined, { max_domains: 100 })).id);
});
afterAll(async () => t.close());

const importZone = (domain: string, text: string, version?: number, query = '') =>
  t.request('PUT', `/v1/domains/${domain}/zone${query}`, {
    raw: text,
    headers: { 'content-type': 'text/dns', ...(version === undefined ? {} : { 'if-match': `"${version}"` }) },
  });
const version = async (domain: string) => (await t.get(`/v1/domains/${domain}`)).body.version as number;

describe('PUT /v1/domains/{domain}/zone (import)', () => {
  it('imports a hand-written zone, keeping its own SOA and apex NS', async () => {
    await t.post('/v1/domains', { account_id: account.id, name: 'shop.example.com', template: 'empty' });
    const r = await importZone('shop.example.com', fixture('bind-style.zone'), await version('shop.example.com'));
    expect(r.status, r.text).toBe(200);
    expect(r.body.created).toHaveLength(13);
    const zone = (await t.get('/v1/domains/shop.example.com/zone')).text;
    expect(zone).toContain('hostmaster.shop.example.com.');
    expect(zone).toContain('@\t3600\tIN\tNS\tns1.host.example.net.');
    expect(zone).not.toContain('ns1.registrar.example.');
    expect(zone).toContain('selector1._domainkey\t3600\tIN\tTXT\t"v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC1"');
    expect(zone).toContain('*.dev\t3600\tIN\tA\t203.0.113.50');
  });

  it.each([
    ['registrar-export.zone', 'example-store.net', 13],
    ['cloudflare-export.zone', 'blog-example.org', 5],
  ])('imports %s, then exports what re-imports unchanged', async (file, name, created) => {
    await t.post('/v1/domains', { account_id: account.id, name, template: 'empty' });
    const r = await importZone(name, fixture(file), await version(name));
    expect(r.status, r.text).toBe(200);
    expect(r.body.created).toHaveLength(created);
    const exported = (await t.get(`/v1/domains/${name}/zone`)).text;
    const again = await importZone(name, exported, await version(name));
    expect(again.body).toMatchObject({ created: [], updated: [], deleted: [], unchanged: created });
    expect((await t.get(`/v1/domains/${name}/zone`)).text).toBe(exported);
  });

  it('reads Unicode owner names, origins and targets as their A-labels', async () => {
    await t.post('/v1/domains', { account_id: account.id, name: 'bücher-import.de', template: 'empty' });
    const zone = 'xn--bcher-import-dlb.de';
    const text =
      '$ORIGIN bücher-import.de.\nbücher 3600 IN A 192.0.2.1\nwww 3600 IN CNAME bücher\n@ 3600 IN MX 10 post.bücher-import.de.\n';
    const r = await importZone(zone, text, await version(zone));
    expect(r.status, r.text).toBe(200);
    const exported = (await t.get(`/v1/domains/${zone}/zone`)).text;
    const records = (await t.get(`/v1/domains/${zone}/records`)).body.data as { name: string; type: string; content: string }[];
    expect(records.find((x) => x.type === 'A')?.name).toBe('xn--bcher-kva');
    expect(records.find((x) => x.type === 'CNAME')).toMatchObject({ name: 'www', content: `xn--bcher-kva.${zone}.` });
    expect(records.find((x) => x.type === 'MX')?.content).toBe(`10 post.${zone}.`);
    expect(exported).not.toMatch(/ü/);
  });

  it('imports and exports HTTPS, SVCB, TLSA, SSHFP, DS, PTR and ALIAS; the export re-imports unchanged', async () => {
    const zone = 'newtypes.example.com';
    await t.post('/v1/domains', { account_id: account.id, name: zone, template: 'empty' });
    const text = [
      `$ORIGIN ${zone}.`,
      '@ 300 IN ALIAS lb.cdn.example.net.',
      '@ 300 IN HTTPS 1 . alpn="h2,h3" ipv6hint=2001:DB8::1',
      '_8443._foo.api 300 IN SVCB 2 svc.example.net. port=8443',
      `_443._tcp.www 300 IN TLSA 3 1 1 ${'AB'.repeat(32)}`,
      `host 300 IN SSHFP 4 2 ${'cd'.repeat(32)}`,
      'sub 300 IN NS ns1.example.net.',
      `sub 300 IN DS 60485 13 2 ${'ef'.repeat(16)} ${'ef'.repeat(16)}`,
      '7 300 IN PTR host.example.net.',
      '',
    ].join('\n');
    const r = await importZone(zone, text, await version(zone));
    expect(r.status, r.text).toBe(200);
    expect(r.body.created).toHaveLength(8);
    const exported = (await t.get(`/v1/domains/${zone}/zone`)).text;
    expect(exported).toContain('HTTPS\t1 . alpn=h2,h3 ipv6hint=2001:db8::1');
    expect(exported).toContain(`TLSA\t3 1 1 ${'ab'.repeat(32)}`);
    expect(exported).toContain(`DS\t60485 13 2 ${'ef'.repeat(32)}`);
    const again = await importZone(zone, exported, await version(zone), '?dry_run=true');
    expect(again.body).toMatchObject({ created: [], updated: [], deleted: [] });
  });

  it("refuses a TTL outside 60-86400 at its line (Cloudflare writes 'auto' as 1)", async () => {
    await t.post('/v1/domains', { account_id: account.id, name: 'auto-ttl.org', template: 'empty' });
    const r = await importZone('auto-ttl.org', 'auto-ttl.org.\t1\tIN\tA\t192.0.2.1\n', await version('auto-ttl.org'));
    expect(r.status).toBe(422);
    expect(r.body.errors[0]).toMatchObject({ pointer: '/lines/1/ttl', code: 'out_of_range' });
  });

  it('round trip: export → import → export is identical', async () => {
    await t.post('/v1/domains', { account_id: account.id, name: 'roundtrip.org', mail_enabled: true });
    await t.post('/v1/domains/roundtrip.org/records', {
      name: 'txt',
      type: 'TXT',
      content: `long ${'x'.repeat(300)} "quoted"; semi`,
    });
    await t.post('/v1/domains/roundtrip.org/records', {
      name: '_sip._tcp',
      type: 'SRV',
      content: '10 60 5060 sip.roundtrip.org.',
    });
    const first = (await t.get('/v1/domains/roundtrip.org/zone')).text;
    const r = await importZone('roundtrip.org', first, await version('roundtrip.org'));
    expect(r.body).toMatchObject({ created: [], updated: [], deleted: [] });
    expect((await t.get('/v1/domains/roundtrip.org/zone')).text).toBe(first);
  });

  it('needs If-Match, supports dry_run, and changes nothing on error', async () => {
    await t.post('/v1/domains', { account_id: account.id, name: 'careful.net', template: 'empty' });
    const text = '$ORIGIN careful.net.\nwww IN A 192.0.2.1\n';
    expect((await importZone('careful.net', text)).status).toBe(428);
    const dry = await importZone('careful.net', text, await version('careful.net'), '?dry_run=true');
    expect(dry.body).toMatchObject({ dry_run: true, created: [{ name: 'www' }] });
    const bad = await importZone(
      'careful.net',
      '$ORIGIN careful.net.\nwww IN A 192.0.2.1\n$INCLUDE x\nold IN HINFO a b\nip IN A 999.1.1.1\n',
      await version('careful.net'),
    );
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { pointer: string; code: string }) => `${e.pointer} ${e.code}`)).toEqual([
      '/lines/3 include_refused',
      '/lines/4 unknown_type',
    ]);
    const badRdata = await importZone('careful.net', '$ORIGIN careful.net.\nip IN A 999.1.1.1\n', await version('careful.net'));
    expect(badRdata.body.errors[0]).toMatchObject({ pointer: '/lines/2/content', code: 'invalid_ipv4' });
    const records = (await t.get('/v1/domains/careful.net/records?type=A')).body.data;
    expect(records).toEqual([]);
  });

  it('refuses other media types', async () => {
    await t.post('/v1/domains', { account_id: account.id, name: 'media.net', template: 'empty' });
    const r = await t.request('PUT', '/v1/domains/media.net/zone', { body: { records: [] }, headers: { 'if-match': '"1"' } });
    expect(r.status).toBe(415);
  });
});
