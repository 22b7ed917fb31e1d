import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMailPassword } from '../../src/lib/mail-password.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createToken, world } from '../helpers/fixtures.js';

let t: TestApp;
let w: Awaited<ReturnType<typeof world>>;
let n = 0;
/** A fresh mail-enabled domain of account A (or of the given account). */
async function mailDomain(accountId = w.accountA.id, mail = true): Promise<{ id: string; name: string; version: number }> {
  const r = await t.post('/v1/domains', {
    account_id: accountId,
    name: `mail${n++}-${Date.now().toString(36)}.com`,
    mail_enabled: mail,
  });
  if (r.status !== 201) throw new Error(r.text);
  return r.body;
}
const PASSWORD = 'correct horse battery staple';
const rendered = (file: string) => readFileSync(path.join(t.dataDir, 'rendered', 'mail', file), 'utf8');
const inSync = (url: string) => eventually(async () => (await t.get(url)).body.sync_state === 'in_sync');
const hashOf = async (id: string) =>
  (await t.db.query<{ password_hash: string }>('SELECT password_hash FROM mail_addresses WHERE id = $1', [id])).rows[0]!
    .password_hash;
const eventTypes = async (id: string) =>
  (await t.get(`/v1/events?resource_id=${id}`)).body.data.map((e: { type: string }) => e.type).sort();

beforeAll(async () => {
  t = await createTestApp();
  w = await world(t);
  for (const account of [w.accountA, w.accountB]) {
    await t.request('PATCH', `/v1/accounts/${account.id}`, {
      body: { limit_overrides: { max_domains: 100, max_email_accounts: 100 } },
    });
  }
});
afterAll(async () => t.close());

describe('POST /v1/emails', () => {
  it('creates a mailbox: lowercased address, A-label domain, no password in the response, an event', async () => {
    const d = await mailDomain();
    const r = await t.post('/v1/emails', { address: `Info@${d.name.toUpperCase()}`, password: PASSWORD, quota_mb: 100 });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.location).toBe(`/v1/emails/${r.body.id}`);
    expect(r.headers.etag).toBe('"1"');
    expect(r.body).toMatchObject({
      address: `info@${d.name}`,
      domain_id: d.id,
      account_id: w.accountA.id,
      quota_mb: 100,
      usage_bytes: 0,
      status: 'active',
      forward_to: [],
      autoresponder: { enabled: false, subject: '', body: '', starts_at: null, ends_at: null },
      sync_state: 'pending',
      version: 1,
    });
    expect(r.body.id).toMatch(/^eml_[0-9a-z]{26}$/);
    expect(r.body).not.toHaveProperty('password');
    expect(JSON.stringify((await t.get(`/v1/emails/${r.body.id}`)).body)).not.toContain('ARGON2');
    expect(await eventTypes(r.body.id)).toEqual(['email.created']);
    const hash = await hashOf(r.body.id);
    expect(hash).toMatch(/^\{ARGON2ID\}\$argon2id\$v=19\$m=1024,t=1,p=1\$/);
    expect(await verifyMailPassword(hash, PASSWORD)).toBe(true);
  });

  it('takes a Unicode domain and stores its A-label', async () => {
    await t.post('/v1/domains', { account_id: w.accountA.id, name: 'bücher-post.de', mail_enabled: true });
    const r = await t.post('/v1/emails', { address: 'kasse@Bücher-Post.de', password: PASSWORD, quota_mb: 10 });
    expect(r.status, r.text).toBe(201);
    expect(r.body.address).toBe('kasse@xn--bcher-post-9db.de');
  });

  it('generate_password returns the password once; it verifies against the stored hash', async () => {
    const d = await mailDomain();
    const r = await t.post('/v1/emails', { address: `gen@${d.name}`, generate_password: true, quota_mb: 10 });
    expect(r.status).toBe(201);
    expect(r.body.password).toMatch(/^[a-zA-Z2-9]{24}$/);
    expect(await verifyMailPassword(await hashOf(r.body.id), r.body.password)).toBe(true);
    expect((await t.get(`/v1/emails/${r.body.id}`)).body).not.toHaveProperty('password');
    expect((await t.get(`/v1/emails?q=gen@`)).text).not.toContain(r.body.password);
  });

  it('no plaintext password reaches the database, the events or the rendered files', async () => {
    const d = await mailDomain();
    const secret = 'plaintext-canary-8f3a9c2b71';
    const r = await t.post('/v1/emails', { address: `canary@${d.name}`, password: secret, quota_mb: 10 }, undefined, {
      'idempotency-key': 'canary-1',
    });
    expect(r.status).toBe(201);
    const gen = await t.post('/v1/emails', { address: `canary2@${d.name}`, generate_password: true, quota_mb: 10 }, undefined, {
      'idempotency-key': 'canary-2',
    });
    await inSync(`/v1/emails/${gen.body.id}`);
    for (const table of ['mail_addresses', 'events', 'idempotency_keys', 'pgboss.job']) {
      const dump = JSON.stringify((await t.db.query(`SELECT * FROM ${table}`)).rows);
      expect(dump, table).not.toContain(secret);
      expect(dump, table).not.toContain(gen.body.password);
    }
    for (const file of ['passwd', 'virtual_mailbox_maps', 'virtual_alias_maps']) {
      expect(rendered(file)).not.toContain(secret);
      expect(rendered(file)).not.toContain(gen.body.password);
    }
  });

  it('bad input is a 422 listing every field, and creates nothing', async () => {
    const d = await mailDomain();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ address: `.lead@${d.name}`, password: PASSWORD }, '/address', 'invalid_local_part'],
      [{ address: `a..b@${d.name}`, password: PASSWORD }, '/address', 'invalid_local_part'],
      [{ address: `a b@${d.name}`, password: PASSWORD }, '/address', 'invalid_local_part'],
      [{ address: `#hash@${d.name}`, password: PASSWORD }, '/address', 'invalid_local_part'],
      [{ address: `${'x'.repeat(65)}@${d.name}`, password: PASSWORD }, '/address', 'local_part_too_long'],
      [{ address: 'no-at-sign', password: PASSWORD }, '/address', 'invalid_address'],
      [{ address: 'x@localhost', password: PASSWORD }, '/address', 'invalid_domain'],
      [{ address: `short@${d.name}`, password: 'short' }, '/password', 'too_short'],
      [{ address: `ctl@${d.name}`, password: 'twelve chars\nplus' }, '/password', 'invalid_characters'],
      [{ address: `same@${d.name}`, password: `same@${d.name}` }, '/password', 'too_weak'],
      [{ address: `none@${d.name}` }, '/password', 'required'],
      [{ address: `both@${d.name}`, password: PASSWORD, generate_password: true }, '/generate_password', 'conflicting'],
      [{ address: `fw@${d.name}`, password: PASSWORD, forward_to: ['not-an-address'] }, '/forward_to/0', 'invalid_address'],
      [{ address: `fw@${d.name}`, password: PASSWORD, forward_to: [`fw@${d.name}`] }, '/forward_to/0', 'self'],
      [{ address: `fw@${d.name}`, password: PASSWORD, forward_to: ['a@b.org', 'A@b.org'] }, '/forward_to/1', 'duplicate'],
      [
        { address: `ar@${d.name}`, password: PASSWORD, autoresponder: { enabled: true, body: 'x' } },
        '/autoresponder/subject',
        'required',
      ],
      [
        {
          address: `ar@${d.name}`,
          password: PASSWORD,
          autoresponder: { enabled: true, subject: 'a\r\nBcc: x@y.org', body: 'x' },
        },
        '/autoresponder/subject',
        'invalid_characters',
      ],
      [
        {
          address: `ar@${d.name}`,
          password: PASSWORD,
          autoresponder: { subject: 's', body: 'b', starts_at: '2027-01-02T00:00:00Z', ends_at: '2027-01-01T00:00:00Z' },
        },
        '/autoresponder/ends_at',
        'before_start',
      ],
    ];
    for (const [body, pointer, code] of cases) {
      const r = await t.post('/v1/emails', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.headers['content-type']).toContain('application/problem+json');
      expect(r.body.errors, JSON.stringify(body)).toEqual(expect.arrayContaining([expect.objectContaining({ pointer, code })]));
    }
    for (const body of [
      { address: `x@${d.name}`, password: PASSWORD, admin: true },
      { address: `x@${d.name}`, password: PASSWORD, quota_mb: '10' },
      { address: `x@${d.name}`, password: PASSWORD, quota_mb: 0 },
      { address: 42, password: PASSWORD },
    ]) {
      expect((await t.post('/v1/emails', body)).status, JSON.stringify(body)).toBe(422);
    }
    expect((await t.get(`/v1/emails?domain=${d.id}`)).body.data).toEqual([]);
  });

  it('the domain must be in reach (404) and have mail enabled (409 invalid_state)', async () => {
    const foreign = await mailDomain(w.accountB.id);
    const r = await t.post('/v1/emails', { address: `x@${foreign.name}`, password: PASSWORD }, w.tokenA);
    expect(r.status).toBe(404);
    expect((await t.post('/v1/emails', { address: 'x@nowhere-hosted.com', password: PASSWORD })).status).toBe(404);
    const noMail = await mailDomain(w.accountA.id, false);
    const off = await t.post('/v1/emails', { address: `x@${noMail.name}`, password: PASSWORD });
    expect(off.status).toBe(409);
    expect(off.body.code).toBe('invalid_state');
  });

  it('an address is unique across mailboxes and forwarders (409 already_exists)', async () => {
    const d = await mailDomain();
    expect((await t.post('/v1/emails', { address: `dup@${d.name}`, password: PASSWORD, quota_mb: 10 })).status).toBe(201);
    const again = await t.post('/v1/emails', { address: `DUP@${d.name}`, password: PASSWORD, quota_mb: 10 });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('already_exists');
    const fwd = await t.post('/v1/email-forwarders', { address: `dup@${d.name}`, destinations: ['a@b.org'] });
    expect(fwd.status).toBe(409);
    await t.post('/v1/email-forwarders', { address: `fwd-first@${d.name}`, destinations: ['a@b.org'] });
    expect((await t.post('/v1/emails', { address: `fwd-first@${d.name}`, password: PASSWORD, quota_mb: 10 })).status).toBe(409);
  });
});

describe('plan limits', () => {
  it('max_email_accounts, max_email_quota_mb and the remaining disk: 403 quota_exceeded with limit and usage', async () => {
    const plan = await createPlan(t, undefined, { max_email_accounts: 2, max_email_quota_mb: 50, disk_quota_mb: 60 });
    const account = await createAccount(t, plan.id);
    const d = await mailDomain(account.id);
    const tooBig = await t.post('/v1/emails', { address: `big@${d.name}`, password: PASSWORD, quota_mb: 51 });
    expect(tooBig.status).toBe(403);
    expect(tooBig.body).toMatchObject({ code: 'quota_exceeded', limit: 50, usage: 51 });

    const first = await t.post('/v1/emails', { address: `one@${d.name}`, password: PASSWORD });
    expect(first.status).toBe(201);
    expect(first.body.quota_mb).toBe(50);
    // 20 MiB of files leave 40 MiB of the account's 60: a 50 MB mailbox no longer fits, 40 does.
    const home = path.join(t.dataDir, 'accounts', account.id, 'files');
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, 'blob'), Buffer.alloc(20 * 1024 * 1024));
    const disk = await t.post('/v1/emails', { address: `two@${d.name}`, password: PASSWORD, quota_mb: 50 });
    expect(disk.status).toBe(403);
    expect(disk.body.exceeded[0]).toMatchObject({ limit: 'disk_quota_mb', allowed: 60 * 1024 * 1024 });
    const defaulted = await t.post('/v1/emails', { address: `two@${d.name}`, password: PASSWORD });
    expect(defaulted.status, defaulted.text).toBe(201);
    expect(defaulted.body.quota_mb).toBe(40);

    const third = await t.post('/v1/emails', { address: `three@${d.name}`, password: PASSWORD, quota_mb: 1 });
    expect(third.status).toBe(403);
    expect(third.body).toMatchObject({ code: 'quota_exceeded', limit: 2, usage: 2 });
    expect((await t.get(`/v1/accounts/${account.id}/usage`)).body.usage.email_accounts).toBe(2);

    const raise = await t.request('PATCH', `/v1/emails/${defaulted.body.id}`, { body: { quota_mb: 45 } });
    expect(raise.status).toBe(403);
    const lower = await t.request('PATCH', `/v1/emails/${first.body.id}`, { body: { quota_mb: 5 } });
    expect(lower.status).toBe(200);
    expect(lower.body.quota_mb).toBe(5);
  });
});

describe('reading', () => {
  it('lists with filters account_id, domain (id, name, Unicode) and q; reach applies; foreign or malformed ids are 404', async () => {
    const d = await mailDomain();
    const box = await t.post('/v1/emails', { address: `listed@${d.name}`, password: PASSWORD, quota_mb: 10 });
    const other = await mailDomain(w.accountB.id);
    const foreign = await t.post('/v1/emails', { address: `theirs@${other.name}`, password: PASSWORD, quota_mb: 10 });
    const ids = async (q: string, token?: string) =>
      (await t.get(`/v1/emails?limit=200&${q}`, token)).body.data.map((e: { id: string }) => e.id);
    expect(await ids(`domain=${d.id}`)).toEqual([box.body.id]);
    expect(await ids(`domain=${d.name}`)).toEqual([box.body.id]);
    expect(await ids(`domain=${d.name.toUpperCase()}`)).toEqual([box.body.id]);
    expect(await ids('q=listed@')).toEqual([box.body.id]);
    expect(await ids(`account_id=${w.accountB.id}`, w.tokenA)).toEqual([]);
    expect(await ids('', w.tokenA)).not.toContain(foreign.body.id);
    expect(await ids('', w.tokenAccountA)).toContain(box.body.id);
    expect(await ids('', w.tokenB)).toEqual([foreign.body.id]);
    expect((await t.get(`/v1/emails/${foreign.body.id}`, w.tokenA)).status).toBe(404);
    expect((await t.request('DELETE', `/v1/emails/${foreign.body.id}`, { token: w.tokenA })).status).toBe(404);
    expect((await t.get('/v1/emails/eml_nope')).status).toBe(404);
    expect((await t.get(`/v1/emails/${d.id}`)).status).toBe(404);
    expect((await t.get('/v1/emails?bogus=1')).status).toBe(400);
    const got = await t.get(`/v1/emails/${box.body.id}`);
    expect(got.headers.etag).toBe('"1"');
    expect((await t.get(`/v1/emails/${box.body.id}`, undefined, { 'if-none-match': '"1"' })).status).toBe(304);
  });

  it('scopes: emails:read cannot write; a token without emails scopes cannot read', async () => {
    const d = await mailDomain();
    const reader = await createToken(t, { principal: { kind: 'reseller', id: w.resellerA.id }, scopes: ['emails:read'] });
    const r = await t.post('/v1/emails', { address: `scoped@${d.name}`, password: PASSWORD }, reader);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('insufficient_scope');
    expect((await t.get('/v1/emails', reader)).status).toBe(200);
    expect((await t.get('/v1/emails', w.readOnly)).status).toBe(403);
  });

  it('usage_bytes is measured from the Maildir and counts in the account disk usage', async () => {
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id);
    const d = await mailDomain(account.id);
    const box = await t.post('/v1/emails', { address: `full@${d.name}`, password: PASSWORD, quota_mb: 10 });
    await inSync(`/v1/emails/${box.body.id}`);
    const maildir = path.join(t.dataDir, 'accounts', account.id, 'mail', d.name, box.body.id, 'Maildir');
    for (const sub of ['cur', 'new', 'tmp']) expect(existsSync(path.join(maildir, sub))).toBe(true);
    writeFileSync(path.join(maildir, 'new', '1700000000.M1P1.host'), Buffer.alloc(12_345, 'x'));
    expect((await t.get(`/v1/emails/${box.body.id}`)).body.usage_bytes).toBe(12_345);
    expect((await t.get(`/v1/accounts/${account.id}/usage`)).body.usage).toMatchObject({ email_accounts: 1, disk_bytes: 12_345 });
  });
});

describe('changing mailboxes', () => {
  it('a new password replaces the hash; generate_password in a PATCH returns the new one once', async () => {
    const d = await mailDomain();
    const box = await t.post('/v1/emails', { address: `pw@${d.name}`, password: PASSWORD, quota_mb: 10 });
    const before = await hashOf(box.body.id);
    const changed = await t.request('PATCH', `/v1/emails/${box.body.id}`, { body: { password: 'a brand new passphrase' } });
    expect(changed.status).toBe(200);
    expect(changed.body.version).toBe(2);
    expect(changed.body).not.toHaveProperty('password');
    const after = await hashOf(box.body.id);
    expect(after).not.toBe(before);
    expect(await verifyMailPassword(after, 'a brand new passphrase')).toBe(true);
    expect(await verifyMailPassword(after, PASSWORD)).toBe(false);
    await inSync(`/v1/emails/${box.body.id}`);
    expect(rendered('passwd')).toContain(`pw@${d.name}:${after}:`);
    expect(rendered('passwd')).not.toContain(before);

    const gen = await t.request('PATCH', `/v1/emails/${box.body.id}`, { body: { generate_password: true } });
    expect(gen.body.password).toMatch(/^[a-zA-Z2-9]{24}$/);
    expect(await verifyMailPassword(await hashOf(box.body.id), gen.body.password)).toBe(true);
    const weak = await t.request('PATCH', `/v1/emails/${box.body.id}`, { body: { password: 'weak' } });
    expect(weak.status).toBe(422);
  });

  it('PUT needs every mutable field; If-Match guards; a stale ETag is 412', async () => {
    const d = await mailDomain();
    const box = await t.post('/v1/emails', { address: `put@${d.name}`, password: PASSWORD, quota_mb: 10 });
    expect((await t.request('PUT', `/v1/emails/${box.body.id}`, { body: { quota_mb: 20 } })).status).toBe(422);
    const put = await t.request('PUT', `/v1/emails/${box.body.id}`, {
      body: { quota_mb: 20, status: 'active', forward_to: ['copy@elsewhere.org'], autoresponder: { enabled: false } },
      headers: { 'if-match': '"1"' },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ quota_mb: 20, forward_to: ['copy@elsewhere.org'], version: 2 });
    const stale = await t.request('PATCH', `/v1/emails/${box.body.id}`, {
      body: { quota_mb: 30 },
      headers: { 'if-match': '"1"' },
    });
    expect(stale.status).toBe(412);
    expect(await eventTypes(box.body.id)).toEqual(['email.created', 'email.updated']);
  });

  it('suspension, forwarding and the autoresponder are rendered for the mail server', async () => {
    const d = await mailDomain();
    const box = await t.post('/v1/emails', { address: `away@${d.name}`, password: PASSWORD, quota_mb: 10 });
    const patched = await t.request('PATCH', `/v1/emails/${box.body.id}`, {
      body: {
        status: 'suspended',
        forward_to: ['boss@elsewhere.org'],
        autoresponder: { enabled: true, subject: 'Out of office', body: 'Back on "Monday".', ends_at: '2030-01-01T00:00:00Z' },
      },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.autoresponder).toEqual({
      enabled: true,
      subject: 'Out of office',
      body: 'Back on "Monday".',
      starts_at: null,
      ends_at: '2030-01-01T00:00:00.000Z',
    });
    await inSync(`/v1/emails/${box.body.id}`);
    const line = rendered('passwd')
      .split('\n')
      .find((l) => l.startsWith(`away@${d.name}:`)) as string;
    expect(line).toMatch(/ nologin=y$/);
    expect(line).toContain('userdb_quota_rule=*:storage=10M');
    expect(rendered('virtual_alias_maps')).toContain(`away@${d.name} away@${d.name}, boss@elsewhere.org\n`);
    const sieve = path.join(t.dataDir, 'accounts', w.accountA.id, 'mail', d.name, box.body.id, '.dovecot.sieve');
    expect(readFileSync(sieve, 'utf8')).toContain(
      'vacation :days 1 :addresses ["away@' + d.name + '"] :subject "Out of office" "Back on \\"Monday\\".";',
    );

    await t.request('PATCH', `/v1/emails/${box.body.id}`, { body: { status: 'active', autoresponder: { enabled: false } } });
    await inSync(`/v1/emails/${box.body.id}`);
    expect(
      rendered('passwd')
        .split('\n')
        .find((l) => l.startsWith(`away@${d.name}:`)),
    ).not.toContain('nologin');
    expect(existsSync(sieve)).toBe(false);
  });

  it("an account's suspension refuses its mailboxes' logins, and its own token may not write", async () => {
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id);
    const owner = await createToken(t, { principal: { kind: 'account', id: account.id } });
    const d = await mailDomain(account.id);
    const box = await t.post('/v1/emails', { address: `sus@${d.name}`, password: PASSWORD, quota_mb: 10 }, owner);
    expect(box.status).toBe(201);
    await t.post(`/v1/accounts/${account.id}/suspend`, { reason: 'unpaid' });
    await eventually(async () => /^sus@.*nologin=y$/m.test(rendered('passwd')));
    const blocked = await t.request('PATCH', `/v1/emails/${box.body.id}`, { body: { quota_mb: 5 }, token: owner });
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe('account_suspended');
    await t.post(`/v1/accounts/${account.id}/unsuspend`);
    await eventually(async () => !/^sus@.*nologin=y$/m.test(rendered('passwd')));
  });

  it('DELETE removes the mailbox, its Maildir and its lines; then 404', async () => {
    const d = await mailDomain();
    const box = await t.post('/v1/emails', { address: `gone@${d.name}`, password: PASSWORD, quota_mb: 10 });
    await inSync(`/v1/emails/${box.body.id}`);
    const home = path.join(t.dataDir, 'accounts', w.accountA.id, 'mail', d.name, box.body.id);
    expect(existsSync(home)).toBe(true);
    expect((await t.request('DELETE', `/v1/emails/${box.body.id}`, { headers: { 'if-match': '"9"' } })).status).toBe(412);
    expect((await t.request('DELETE', `/v1/emails/${box.body.id}`)).status).toBe(204);
    expect((await t.get(`/v1/emails/${box.body.id}`)).status).toBe(404);
    expect(await eventTypes(box.body.id)).toEqual(['email.created', 'email.deleted']);
    await eventually(async () => !existsSync(home));
    await eventually(async () => !rendered('passwd').includes(`gone@${d.name}`));
  });
});

describe('forwarders', () => {
  it('CRUD with destination rules, rendered into virtual_alias_maps, with events', async () => {
    const d = await mailDomain();
    for (const [destinations, code] of [
      [[], null],
      [[`sales@${d.name}`], 'self'],
      [['x@y.org', 'x@y.org'], 'duplicate'],
      [['nope'], 'invalid_address'],
    ] as const) {
      const r = await t.post('/v1/email-forwarders', { address: `sales@${d.name}`, destinations });
      expect(r.status, JSON.stringify(destinations)).toBe(422);
      if (code) expect(r.body.errors[0].code).toBe(code);
    }
    const f = await t.post('/v1/email-forwarders', { address: `Sales@${d.name}`, destinations: ['a@b.org', 'C@D.org'] });
    expect(f.status, f.text).toBe(201);
    expect(f.body).toMatchObject({ address: `sales@${d.name}`, destinations: ['a@b.org', 'c@d.org'], version: 1 });
    expect(f.body.id).toMatch(/^fwd_/);
    expect((await t.get(`/v1/email-forwarders?domain=${d.name}`)).body.data.map((x: { id: string }) => x.id)).toEqual([
      f.body.id,
    ]);
    expect((await t.get(`/v1/email-forwarders/${f.body.id}`, w.tokenB)).status).toBe(404);
    expect((await t.get(`/v1/emails/${f.body.id}`)).status).toBe(404);
    await inSync(`/v1/email-forwarders/${f.body.id}`);
    expect(rendered('virtual_alias_maps')).toContain(`sales@${d.name} a@b.org, c@d.org\n`);
    expect(rendered('passwd')).not.toContain(`sales@${d.name}`);

    const put = await t.request('PUT', `/v1/email-forwarders/${f.body.id}`, { body: { destinations: ['z@y.org'] } });
    expect(put.body).toMatchObject({ destinations: ['z@y.org'], version: 2 });
    expect((await t.request('PATCH', `/v1/email-forwarders/${f.body.id}`, { body: { destinations: [] } })).status).toBe(422);
    await inSync(`/v1/email-forwarders/${f.body.id}`);
    expect(rendered('virtual_alias_maps')).toContain(`sales@${d.name} z@y.org\n`);
    const patched = await t.request('PATCH', `/v1/email-forwarders/${f.body.id}`, {
      body: { destinations: ['z@y.org', 'x@w.org'] },
      headers: { 'if-match': '"2"' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ address: `sales@${d.name}`, destinations: ['z@y.org', 'x@w.org'], version: 3 });
    await inSync(`/v1/email-forwarders/${f.body.id}`);
    expect(rendered('virtual_alias_maps')).toContain(`sales@${d.name} z@y.org, x@w.org\n`);
    expect((await t.request('DELETE', `/v1/email-forwarders/${f.body.id}`)).status).toBe(204);
    expect(await eventTypes(f.body.id)).toEqual([
      'email_forwarder.created',
      'email_forwarder.deleted',
      'email_forwarder.updated',
      'email_forwarder.updated',
    ]);
    await eventually(async () => !rendered('virtual_alias_maps').includes(`sales@${d.name}`));
  });
});

describe('domains held by their addresses', () => {
  it('mail cannot be switched off, nor the domain deleted, while addresses use it (409 in_use listing them)', async () => {
    const d = await mailDomain();
    const box = await t.post('/v1/emails', { address: `held@${d.name}`, password: PASSWORD, quota_mb: 10 });
    const fwd = await t.post('/v1/email-forwarders', { address: `also@${d.name}`, destinations: ['a@b.org'] });
    const off = await t.request('PATCH', `/v1/domains/${d.id}`, { body: { mail_enabled: false } });
    expect(off.status).toBe(409);
    expect(off.body.code).toBe('in_use');
    const del = await t.request('DELETE', `/v1/domains/${d.id}`);
    expect(del.status).toBe(409);
    expect(del.body.used_by).toEqual([
      { type: 'email_forwarder', id: fwd.body.id, address: `also@${d.name}` },
      { type: 'email', id: box.body.id, address: `held@${d.name}` },
    ]);
    expect((await t.get(`/v1/domains/${d.id}`)).body.mail_enabled).toBe(true);
  });

  it('cascade=true deletes them with the domain (needs emails:write), with their events, and withdraws the maps', async () => {
    const d = await mailDomain();
    const box = await t.post('/v1/emails', { address: `casc@${d.name}`, password: PASSWORD, quota_mb: 10 });
    await inSync(`/v1/emails/${box.body.id}`);
    expect(rendered('virtual_mailbox_domains')).toContain(`${d.name} OK\n`);
    const domainsOnly = await createToken(t, { principal: { kind: 'reseller', id: w.resellerA.id }, scopes: ['domains:write'] });
    const denied = await t.request('DELETE', `/v1/domains/${d.id}?cascade=true`, { token: domainsOnly });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('insufficient_scope');
    expect((await t.request('DELETE', `/v1/domains/${d.id}?cascade=true`)).status).toBe(204);
    expect((await t.get(`/v1/emails/${box.body.id}`)).status).toBe(404);
    expect(await eventTypes(box.body.id)).toEqual(['email.created', 'email.deleted']);
    // The joined files are rewritten one after the other, the maps side by side: wait for each.
    await eventually(async () =>
      ['virtual_mailbox_domains', 'virtual_alias_maps', 'passwd'].every((file) => !rendered(file).includes(d.name)),
    );
    expect(rendered('passwd')).not.toContain(`casc@${d.name}`);
    expect(existsSync(path.join(t.dataDir, 'accounts', w.accountA.id, 'mail', d.name))).toBe(false);
  });

  it('a suspended domain refuses its mailboxes logins', async () => {
    const d = await mailDomain();
    const box = await t.post('/v1/emails', { address: `dsus@${d.name}`, password: PASSWORD, quota_mb: 10 });
    await inSync(`/v1/emails/${box.body.id}`);
    await t.request('PATCH', `/v1/domains/${d.id}`, { body: { status: 'suspended' } });
    await eventually(async () => /^dsus@.*nologin=y$/m.test(rendered('passwd')));
  });
});
