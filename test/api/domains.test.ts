import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createToken, world } from '../helpers/fixtures.js';

let t: TestApp;
let plan: { id: string };
let account: { id: string };
beforeAll(async () => {
  t = await createTestApp({
    env: {
      BERTH_NAMESERVERS: 'ns1.host.example.net,ns2.host.example.net',
      BERTH_WEB_IPV4: '192.0.2.10',
      BERTH_WEB_IPV6: '2001:db8::10',
    },
  });
  plan = await createPlan(t, undefined, { max_domains: 100 });
  account = await createAccount(t, plan.id);
});
afterAll(async () => t.close());

const records = async (domain: string) =>
  (await t.get(`/v1/domains/${domain}/records?limit=200`)).body.data
    .map((r: { name: string; type: string; content: string }) => `${r.name} ${r.type} ${r.content}`)
    .sort();

describe('creating domains', () => {
  it('normalises the name and creates the zone from the default template', async () => {
    const r = await t.post('/v1/domains', { account_id: account.id, name: 'Bücher-Shop.DE' });
    expect(r.status).toBe(201);
    expect(r.headers.location).toBe(`/v1/domains/${r.body.id}`);
    expect(r.body).toMatchObject({
      name: 'xn--bcher-shop-9db.de',
      unicode_name: 'bücher-shop.de',
      account_id: account.id,
      status: 'active',
      mail_enabled: false,
      nameservers: ['ns1.host.example.net', 'ns2.host.example.net'],
    });
    expect(r.body.id).toMatch(/^dom_[0-9a-z]{26}$/);
    expect(String(r.body.dns.serial)).toMatch(/^\d{8}00$/);
    expect(await records(r.body.id)).toEqual([
      '@ A 192.0.2.10',
      '@ AAAA 2001:db8::10',
      '@ NS ns1.host.example.net.',
      '@ NS ns2.host.example.net.',
      `@ SOA ns1.host.example.net. hostmaster.xn--bcher-shop-9db.de. ${r.body.dns.serial} 3600 900 1209600 300`,
      'www A 192.0.2.10',
      'www AAAA 2001:db8::10',
    ]);
    expect(r.body.dns.record_count).toBe(7);
  });

  it('adds MX and SPF when mail is enabled; `empty` adds nothing beyond SOA and NS', async () => {
    const mail = await t.post('/v1/domains', { account_id: account.id, name: 'mail-on.com', mail_enabled: true });
    expect(await records(mail.body.id)).toEqual(
      expect.arrayContaining([
        '@ MX 10 mail.mail-on.com.',
        '@ TXT v=spf1 mx -all',
        'mail A 192.0.2.10',
        'mail AAAA 2001:db8::10',
      ]),
    );
    const empty = await t.post('/v1/domains', { account_id: account.id, name: 'bare.org', template: 'empty' });
    expect((await records(empty.body.id)).map((r: string) => r.split(' ')[1])).toEqual(['NS', 'NS', 'SOA']);
  });

  it('records carry fqdn and the managed flag', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'fqdn.net' });
    const list = await t.get(`/v1/domains/fqdn.net/records?type=A`);
    expect(list.body.data.map((r: { fqdn: string }) => r.fqdn).sort()).toEqual(['fqdn.net.', 'www.fqdn.net.']);
    const soa = (await t.get(`/v1/domains/${d.body.id}/records?type=SOA`)).body.data[0];
    expect(soa.managed).toBe(true);
    const one = await t.get(`/v1/domains/fqdn.net/records/${soa.id}`);
    expect(one.body).toMatchObject({ id: soa.id, type: 'SOA', managed: true });
    expect(one.headers.etag).toBe(`"${soa.version}"`);
    expect((await t.get(`/v1/domains/fqdn.net/records/rec_01jd3x9v6ef8tb2q4w5n7k8m9p`)).status).toBe(404);
  });

  it.each([
    ['localhost.test', 'special_use_tld'],
    ['printer.local', 'special_use_tld'],
    ['com', 'single_label'],
    ['a_b.com', 'invalid_label'],
    [`${'x'.repeat(64)}.com`, 'label_too_long'],
  ])('%s is a 422 naming the rule', async (name, code) => {
    const r = await t.post('/v1/domains', { account_id: account.id, name });
    expect(r.status).toBe(422);
    expect(r.body.errors[0]).toMatchObject({ pointer: '/name', code });
  });

  it('a name is unique across the whole service, in either spelling', async () => {
    const other = await createAccount(t, plan.id);
    await t.post('/v1/domains', { account_id: account.id, name: 'münchen.de' });
    const r = await t.post('/v1/domains', { account_id: other.id, name: 'XN--MNCHEN-3YA.de' });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('already_exists');
  });

  it('max_domains is enforced: 403 quota_exceeded', async () => {
    const small = await createPlan(t, undefined, { max_domains: 1 });
    const acc = await createAccount(t, small.id);
    expect((await t.post('/v1/domains', { account_id: acc.id, name: 'first-one.com' })).status).toBe(201);
    const r = await t.post('/v1/domains', { account_id: acc.id, name: 'second-one.com' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'quota_exceeded', limit: 1, usage: 1 });
    expect((await t.get(`/v1/accounts/${acc.id}`)).body.usage.domains).toBe(1);
  });

  it('an unknown or unreachable account is 404; events are written', async () => {
    expect((await t.post('/v1/domains', { account_id: 'acc_01jd3x9v6ef8tb2q4w5n7k8m9p', name: 'nobody.com' })).status).toBe(404);
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'evented.com' });
    const types = (await t.get(`/v1/events?resource_id=${d.body.id}`)).body.data.map((e: { type: string }) => e.type).sort();
    expect(types).toEqual(['dns.zone.changed', 'domain.created']);
  });
});

describe('reading domains', () => {
  it('by id or name (A-label or Unicode), with filters', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'zürich-test.ch' });
    for (const ref of [d.body.id, 'xn--zrich-test-9db.ch', encodeURIComponent('zürich-test.ch')]) {
      const r = await t.get(`/v1/domains/${ref}`);
      expect(r.status).toBe(200);
      expect(r.body.id).toBe(d.body.id);
    }
    expect(
      (await t.get(`/v1/domains?name=${encodeURIComponent('ZÜRICH-test.ch')}`)).body.data.map((x: { id: string }) => x.id),
    ).toEqual([d.body.id]);
    expect((await t.get(`/v1/domains?q=rich-te`)).body.data.map((x: { id: string }) => x.id)).toEqual([d.body.id]);
    expect((await t.get(`/v1/domains?account_id=${account.id}&status=suspended`)).body.data).toEqual([]);
    expect((await t.get('/v1/domains/not a domain')).status).toBe(404);
  });
});

describe('changing domains', () => {
  it('enabling mail adds the mail records with one serial bump; disabling removes them', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'toggle-mail.com' });
    const on = await t.request('PATCH', `/v1/domains/${d.body.id}`, {
      body: { mail_enabled: true },
      headers: { 'if-match': `"${d.body.version}"` },
    });
    expect(on.status).toBe(200);
    expect(on.body.mail_enabled).toBe(true);
    expect(on.body.dns.serial).toBe(d.body.dns.serial + 1);
    expect(await records(d.body.id)).toContain('@ MX 10 mail.toggle-mail.com.');
    expect(await records(d.body.id)).toContain(
      `@ SOA ns1.host.example.net. hostmaster.toggle-mail.com. ${on.body.dns.serial} 3600 900 1209600 300`,
    );
    const off = await t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { mail_enabled: false } });
    expect(off.body.dns.serial).toBe(d.body.dns.serial + 2);
    expect((await records(d.body.id)).some((r: string) => r.includes(' MX '))).toBe(false);
    const stale = await t.request('PATCH', `/v1/domains/${d.body.id}`, {
      body: { mail_enabled: true },
      headers: { 'if-match': `"${d.body.version}"` },
    });
    expect(stale.status).toBe(412);
  });

  it('two toggles with the same ETag: one wins, the other is 412 (never a 500)', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'race-mail.com' });
    const headers = { 'if-match': `"${d.body.version}"` };
    const results = await Promise.all([
      t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { mail_enabled: true }, headers }),
      t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { mail_enabled: true }, headers }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
  });

  it('enabling mail keeps a mail record the owner already added', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'own-mx.com', template: 'empty' });
    await t.post('/v1/domains/own-mx.com/records', { name: '@', type: 'MX', content: '10 mail.own-mx.com.' });
    const on = await t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { mail_enabled: true } });
    expect(on.status).toBe(200);
    expect((await records(d.body.id)).filter((r: string) => r.includes(' MX '))).toEqual(['@ MX 10 mail.own-mx.com.']);
  });

  it("disabling mail removes only what the template wrote: the owner's identical MX and an edited record stay", async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'own-mx-off.com', template: 'empty' });
    await t.post('/v1/domains/own-mx-off.com/records', { name: '@', type: 'MX', content: '10 mail.own-mx-off.com.' });
    expect((await t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { mail_enabled: true } })).status).toBe(200);
    // The template's SPF policy, taken over by the owner with an edit of its TTL.
    // (The managed DKIM and DMARC records are TXT too, at their own names.)
    const spf = (await t.get(`/v1/domains/${d.body.id}/records?type=TXT`)).body.data.find(
      (r: { name: string }) => r.name === '@',
    );
    expect(spf.content).toBe('v=spf1 mx -all');
    const mailHost = await t.post('/v1/domains/own-mx-off.com/records', { name: 'mail', type: 'A', content: '192.0.2.25' });
    expect(mailHost.status).toBe(201);
    expect((await t.request('PATCH', `/v1/domains/${d.body.id}/records/${spf.id}`, { body: { ttl: 600 } })).status).toBe(200);
    expect((await t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { mail_enabled: false } })).status).toBe(200);
    expect((await records(d.body.id)).filter((r: string) => !/ (SOA|NS) /.test(r)).sort()).toEqual([
      '@ MX 10 mail.own-mx-off.com.',
      '@ TXT v=spf1 mx -all',
      'mail A 192.0.2.25',
    ]);
  });

  it("enabling mail keeps the owner's SPF policy and joins their TXT set with its TTL", async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'own-spf.com', template: 'empty' });
    await t.post('/v1/domains/own-spf.com/records', {
      name: '@',
      type: 'TXT',
      ttl: 300,
      content: 'v=spf1 include:mx.example.net ~all',
    });
    const on = await t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { mail_enabled: true } });
    expect(on.status).toBe(200);
    const apex = async (id: string) =>
      (await t.get(`/v1/domains/${id}/records?type=TXT`)).body.data.filter((r: { name: string }) => r.name === '@');
    expect((await apex(d.body.id)).map((r: { content: string }) => r.content)).toEqual(['v=spf1 include:mx.example.net ~all']);

    const other = await t.post('/v1/domains', { account_id: account.id, name: 'own-txt.com', template: 'empty' });
    await t.post('/v1/domains/own-txt.com/records', { name: '@', type: 'TXT', ttl: 600, content: 'site-verification=abc' });
    expect((await t.request('PATCH', `/v1/domains/${other.body.id}`, { body: { mail_enabled: true } })).status).toBe(200);
    const joined = await apex(other.body.id);
    expect(joined.map((r: { ttl: number; content: string }) => `${r.ttl} ${r.content}`).sort()).toEqual([
      '600 site-verification=abc',
      '600 v=spf1 mx -all',
    ]);
  });

  it('enabling mail is checked with the zone rules: an MX may not point at a CNAME', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'mail-cname.com', template: 'empty' });
    await t.post('/v1/domains/mail-cname.com/records', { name: 'mail', type: 'CNAME', content: 'mx.example.net.' });
    const r = await t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { mail_enabled: true } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([expect.objectContaining({ pointer: '/mail_enabled/content', code: 'target_is_cname' })]);
    const after = await t.get(`/v1/domains/${d.body.id}`);
    expect(after.body).toMatchObject({ mail_enabled: false, version: d.body.version + 1 });
  });

  it('owners may not suspend their domains; the operator may', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'suspend-me.com' });
    const owner = await createToken(t, { principal: { kind: 'account', id: account.id } });
    expect(
      (await t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { status: 'suspended' }, token: owner })).body.code,
    ).toBe('forbidden');
    expect((await t.request('PATCH', `/v1/domains/${d.body.id}`, { body: { status: 'suspended' } })).body.status).toBe(
      'suspended',
    );
  });

  it('DELETE removes the domain and its records', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'delete-me.com' });
    expect((await t.request('DELETE', `/v1/domains/delete-me.com?cascade=true`)).status).toBe(204);
    expect((await t.get(`/v1/domains/${d.body.id}`)).status).toBe(404);
    const left = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM dns_records WHERE domain_id = $1', [d.body.id]);
    expect(left.rows[0]?.n).toBe(0);
    expect((await t.get(`/v1/events?resource_id=${d.body.id}`)).body.data[0].type).toBe('domain.deleted');
  });
});

describe('reach', () => {
  it('resellers and accounts see only their domains; a missing scope is 403 only when reachable', async () => {
    const w = await world(t);
    const mine = await t.post('/v1/domains', { account_id: w.accountA.id, name: 'reach-a.com' }, w.tokenA);
    expect(mine.status).toBe(201);
    expect((await t.post('/v1/domains', { account_id: w.accountA.id, name: 'reach-b.com' }, w.tokenB)).status).toBe(404);
    expect((await t.get('/v1/domains/reach-a.com', w.tokenB)).status).toBe(404);
    expect((await t.get('/v1/domains/reach-a.com/records', w.tokenB)).status).toBe(404);
    expect((await t.get('/v1/domains/reach-a.com', w.tokenAccountA)).status).toBe(200);
    expect((await t.get('/v1/domains', w.tokenB)).body.data).toEqual([]);
    const noDomains = await createToken(t, { scopes: ['accounts:read'] }, w.tokenA);
    expect((await t.get('/v1/domains/reach-a.com', noDomains)).body).toMatchObject({
      code: 'insufficient_scope',
      scope: 'domains:read',
    });
    expect((await t.get('/v1/domains/reach-b-missing.com', noDomains)).status).toBe(404);
    expect((await t.request('DELETE', '/v1/domains/reach-a.com', { token: w.tokenB })).status).toBe(404);
  });
});
