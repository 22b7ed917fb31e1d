import { createPublicKey, createSign, createVerify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccountOnNewPlan, createToken } from '../helpers/fixtures.js';

/** DKIM keys and DMARC policies of mail-enabled domains, as managed TXT records. */
let t: TestApp;
let account: { id: string };
let n = 0;
const txt = async (domain: string) =>
  (
    (await t.get(`/v1/domains/${domain}/records?type=TXT&limit=200`)).body.data as {
      name: string;
      content: string;
      managed: boolean;
      id: string;
    }[]
  )
    .filter((r) => r.name !== '@')
    .sort((a, b) => a.name.localeCompare(b.name));
const mailDomain = async (mail = true) => {
  const r = await t.post('/v1/domains', {
    account_id: account.id,
    name: `auth${n++}-${Date.now().toString(36)}.com`,
    mail_enabled: mail,
  });
  if (r.status !== 201) throw new Error(r.text);
  return r.body as { id: string; name: string; version: number };
};

beforeAll(async () => {
  t = await createTestApp();
  account = await createAccountOnNewPlan(t);
  await t.request('PATCH', `/v1/accounts/${account.id}`, { body: { limit_overrides: { max_domains: 100 } } });
});
afterAll(async () => t.close());

describe('DKIM and DMARC', () => {
  it('a mail-enabled domain gets an RSA 2048 key under its own selector and p=none, as managed records', async () => {
    const d = await mailDomain();
    expect((await t.get(`/v1/domains/${d.id}`)).body.dmarc).toEqual({ policy: 'none', rua: null });
    const dkim = await t.get(`/v1/domains/${d.name}/dkim`);
    expect(dkim.status, dkim.text).toBe(200);
    expect(dkim.body.selector).toMatch(/^b\d{12}$/);
    expect(dkim.body.previous).toBeNull();
    const key = createPublicKey({ key: Buffer.from(dkim.body.public_key, 'base64'), format: 'der', type: 'spki' });
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(dkim.body.dns_record).toEqual({
      name: `${dkim.body.selector}._domainkey.${d.name}`,
      type: 'TXT',
      content: `v=DKIM1; k=rsa; p=${dkim.body.public_key}`,
    });
    const records = await txt(d.name);
    expect(records.map((r) => [r.name, r.content, r.managed])).toEqual([
      ['_dmarc', 'v=DMARC1; p=none', true],
      [`${dkim.body.selector}._domainkey`, dkim.body.dns_record.content, true],
    ]);
    // Managed: the owner cannot change or delete them.
    const deleted = await t.request('DELETE', `/v1/domains/${d.name}/records/${records[1]!.id}`);
    expect([deleted.status, deleted.body.errors[0].code]).toEqual([422, 'managed']);
    const patched = await t.request('PATCH', `/v1/domains/${d.name}/records/${records[0]!.id}`, {
      body: { content: 'v=DMARC1; p=reject' },
    });
    expect([patched.status, patched.body.errors[0].code]).toEqual([422, 'managed']);
    // The private key never leaves: only a sealed form is stored.
    const stored = (
      await t.db.query<{ private_key_sealed: string }>('SELECT private_key_sealed FROM dkim_keys WHERE domain_id = $1', [d.id])
    ).rows[0]!.private_key_sealed;
    expect(stored).not.toContain('PRIVATE KEY');
  });

  it('rotation: a new selector signs, the old one stays published (with when it goes), announced', async () => {
    const d = await mailDomain();
    const before = (await t.get(`/v1/domains/${d.name}/dkim`)).body;
    const r = await t.post(`/v1/domains/${d.name}/dkim/rotate`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.selector).not.toBe(before.selector);
    expect(r.body.previous).toMatchObject({ selector: before.selector, public_key: before.public_key });
    const retired = Date.parse(r.body.previous.retired_at);
    expect(Date.parse(r.body.previous.removed_after) - retired).toBe(7 * 86_400_000);
    expect((await txt(d.name)).map((x) => x.name).sort()).toEqual(
      ['_dmarc', `${before.selector}._domainkey`, `${r.body.selector}._domainkey`].sort(),
    );
    const events = (await t.get(`/v1/events?resource_id=${d.id}&type=domain.dkim.rotated`)).body.data;
    expect(events).toHaveLength(1);
  });

  it('seven days after a rotation the hourly housekeeping withdraws the old selector', async () => {
    const d = await mailDomain();
    const old = (await t.get(`/v1/domains/${d.name}/dkim`)).body.selector;
    const rotated = (await t.post(`/v1/domains/${d.name}/dkim/rotate`)).body;
    t.clock.advance(7 * 86_400_000 + 60_000);
    // The hourly job, queued now instead of at its cron slot.
    await t.db.query(`INSERT INTO pgboss.job (name, data) VALUES ('housekeeping', '{}')`);
    await eventually(async () => !(await txt(d.name)).some((r) => r.name === `${old}._domainkey`), 30_000);
    const now = (await t.get(`/v1/domains/${d.name}/dkim`)).body;
    expect(now).toMatchObject({ selector: rotated.selector, previous: null });
  });

  it('DMARC policy and report address through PATCH, published at once; mail off takes every managed mail record', async () => {
    const d = await mailDomain();
    const r = await t.request('PATCH', `/v1/domains/${d.name}`, {
      body: { dmarc: { policy: 'quarantine', rua: 'dmarc@example.org' } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.dmarc).toEqual({ policy: 'quarantine', rua: 'dmarc@example.org' });
    expect((await txt(d.name)).find((x) => x.name === '_dmarc')?.content).toBe(
      'v=DMARC1; p=quarantine; rua=mailto:dmarc@example.org',
    );
    const off = await t.request('PATCH', `/v1/domains/${d.name}`, { body: { mail_enabled: false } });
    expect(off.status, off.text).toBe(200);
    expect(await txt(d.name)).toEqual([]);
    expect((await t.get(`/v1/domains/${d.name}/dkim`)).status).toBe(409);
  });

  it('DMARC report addresses as guides write them: mailto: URIs, several, or bare addresses publish the same record', async () => {
    const d = await mailDomain();
    const dmarc = async (rua: string) => {
      const r = await t.request('PATCH', `/v1/domains/${d.name}`, { body: { dmarc: { policy: 'reject', rua } } });
      expect(r.status, r.text).toBe(200);
      return { shown: r.body.dmarc.rua, published: (await txt(d.name)).find((x) => x.name === '_dmarc')?.content };
    };
    const one = { shown: 'dmarc@example.com', published: 'v=DMARC1; p=reject; rua=mailto:dmarc@example.com' };
    expect(await dmarc('mailto:dmarc@example.com')).toEqual(one);
    expect(await dmarc('dmarc@example.com')).toEqual(one);
    expect(await dmarc('MAILTO:DMARC@Example.com')).toEqual(one);
    const two = {
      shown: 'dmarc@example.com,reports@vendor.example!10m',
      published: 'v=DMARC1; p=reject; rua=mailto:dmarc@example.com,mailto:reports@vendor.example!10m',
    };
    expect(await dmarc('mailto:dmarc@example.com, mailto:reports@vendor.example!10m')).toEqual(two);
    expect(await dmarc('dmarc@example.com,reports@vendor.example!10m')).toEqual(two);
    for (const rua of [
      'mailto:',
      'mailto:a@b.com,',
      'https://example.com/r',
      'mailto:a@b.com;p=none',
      'a@b.com!big',
      'a@b.co,b@b.co,c@b.co,d@b.co,e@b.co,f@b.co',
    ]) {
      const r = await t.request('PATCH', `/v1/domains/${d.name}`, { body: { dmarc: { rua } } });
      expect(r.status, rua).toBe(422);
      expect(r.body.errors?.[0]).toMatchObject({ pointer: '/dmarc/rua', code: 'invalid_address' });
    }
    expect((await dmarc('dmarc@example.com')).published).toBe(one.published);
  });

  it('refuses a bad policy or rua, DMARC or rotation without mail, and other tenants: nothing changes', async () => {
    const d = await mailDomain();
    const serial = (await t.get(`/v1/domains/${d.name}`)).body.dns.serial;
    for (const dmarc of [{ policy: 'strict' }, { rua: 'not an address' }, { rua: 'x@y.com; p=none' }, { pct: 50 }]) {
      const r = await t.request('PATCH', `/v1/domains/${d.name}`, { body: { dmarc } });
      expect(r.status, JSON.stringify(dmarc)).toBe(422);
    }
    expect((await t.get(`/v1/domains/${d.name}`)).body.dns.serial).toBe(serial);
    const plain = await mailDomain(false);
    expect((await t.request('PATCH', `/v1/domains/${plain.name}`, { body: { dmarc: { policy: 'reject' } } })).status).toBe(409);
    expect((await t.post(`/v1/domains/${plain.name}/dkim/rotate`)).status).toBe(409);
    const stranger = await createToken(t, { principal: { kind: 'account', id: (await createAccountOnNewPlan(t)).id } });
    expect((await t.get(`/v1/domains/${d.name}/dkim`, stranger)).status).toBe(404);
    expect((await t.post(`/v1/domains/${d.name}/dkim/rotate`, undefined, stranger)).status).toBe(404);
  });

  it('the stored key signs what the published key verifies', async () => {
    const d = await mailDomain();
    const dkim = (await t.get(`/v1/domains/${d.name}/dkim`)).body;
    const { unseal } = await import('../../src/lib/sealed.js');
    const { dkimSealKey } = await import('../../src/modules/domains/mail-auth/repo.js');
    const sealed = (
      await t.db.query<{ private_key_sealed: string }>('SELECT private_key_sealed FROM dkim_keys WHERE domain_id = $1', [d.id])
    ).rows[0]!.private_key_sealed;
    const pem = unseal(sealed, dkimSealKey(t.config));
    const signature = createSign('sha256').update('message').sign(pem);
    const verified = createVerify('sha256')
      .update('message')
      .verify(createPublicKey({ key: Buffer.from(dkim.public_key, 'base64'), format: 'der', type: 'spki' }), signature);
    expect(verified).toBe(true);
  });
});

describe('catch-all', () => {
  const aliasMap = () => readFileSync(path.join(t.dataDir, 'rendered', 'mail', 'virtual_alias_maps'), 'utf8');

  it('sends mail for unknown addresses to a mailbox of the domain; checked, rendered, and held while set', async () => {
    const d = await mailDomain();
    const box = await t.post('/v1/emails', { address: `all@${d.name}`, password: 'a long enough passphrase', quota_mb: 10 });
    expect(box.status, box.text).toBe(201);
    const set = await t.request('PATCH', `/v1/domains/${d.name}`, { body: { catch_all: `All@${d.name}` } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.catch_all).toBe(`all@${d.name}`);
    await eventually(async () => aliasMap().includes(`@${d.name} all@${d.name}\n`));
    // The mailbox maps to itself first: Postfix would otherwise send its own mail to the catch-all too.
    expect(aliasMap()).toContain(`all@${d.name} all@${d.name}\n`);
    const held = await t.request('DELETE', `/v1/emails/${box.body.id}`);
    expect([held.status, held.body.code]).toEqual([409, 'in_use']);
    expect((await t.request('PATCH', `/v1/domains/${d.name}`, { body: { catch_all: null } })).body.catch_all).toBeNull();
    await eventually(async () => !aliasMap().includes(`@${d.name} `));
    expect((await t.request('DELETE', `/v1/emails/${box.body.id}`)).status).toBe(204);
  });

  it('refuses an address outside the domain, one that does not exist, a domain without mail, another tenant', async () => {
    const d = await mailDomain();
    const other = await mailDomain();
    await t.post('/v1/emails', { address: `x@${other.name}`, password: 'a long enough passphrase', quota_mb: 10 });
    const outside = await t.request('PATCH', `/v1/domains/${d.name}`, { body: { catch_all: `x@${other.name}` } });
    expect(outside.body.errors?.[0]).toMatchObject({ pointer: '/catch_all', code: 'outside_domain' });
    const unknown = await t.request('PATCH', `/v1/domains/${d.name}`, { body: { catch_all: `nobody@${d.name}` } });
    expect(unknown.body.errors?.[0]).toMatchObject({ pointer: '/catch_all', code: 'unknown_address' });
    expect((await t.get(`/v1/domains/${d.name}`)).body.catch_all).toBeNull();
    const plain = await mailDomain(false);
    expect((await t.request('PATCH', `/v1/domains/${plain.name}`, { body: { catch_all: `a@${plain.name}` } })).status).toBe(409);
    const stranger = await createToken(t, { principal: { kind: 'account', id: (await createAccountOnNewPlan(t)).id } });
    const foreign = await t.request('PATCH', `/v1/domains/${d.name}`, { body: { catch_all: null }, token: stranger });
    expect(foreign.status).toBe(404);
  });
});
