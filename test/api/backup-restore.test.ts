import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';

/** Round trip: back up, change everything, restore, compare bytes and records; a damaged archive is refused. */
let t: TestApp;
const PASSWORD = 'correct horse battery staple';
const NAME = 'roundtrip.io';

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const done = (opId: string) =>
  eventually(async () => {
    const op = (await t.get(`/v1/operations/${opId}`)).body;
    return ['succeeded', 'failed'].includes(op.status) ? op : null;
  }, 180_000);

async function deployLive(siteId: string, files: Record<string, string>) {
  const r = await t.request('POST', `/v1/sites/${siteId}/deployments`, {
    raw: tarGz(Object.entries(files).map(([p, content]) => ({ path: p, content }))),
    headers: { 'content-type': 'application/gzip' },
  });
  expect(r.status, r.text).toBe(202);
  await done(r.body.operation.id);
}

/** What a restore must bring back, read from the outside (API, database, files). */
async function state(accountId: string, mailboxId: string) {
  const records = (await t.get(`/v1/domains/${NAME}/records?limit=200`)).body.data
    .filter((r: { managed: boolean }) => !r.managed)
    .map((r: { name: string; type: string; ttl: number; content: string }) => `${r.name} ${r.type} ${r.ttl} ${r.content}`)
    .sort();
  const hash = (
    await t.db.query<{ password_hash: string }>('SELECT password_hash FROM mail_addresses WHERE id = $1', [mailboxId])
  ).rows[0]?.password_hash;
  const maildir = path.join(t.dataDir, 'accounts', accountId, 'mail', NAME, mailboxId, 'Maildir', 'new');
  const messages = existsSync(maildir)
    ? readdirSync(maildir).map((f) => `${f}:${readFileSync(path.join(maildir, f), 'utf8')}`)
    : [];
  const sites = (await t.get(`/v1/sites?account_id=${accountId}`)).body.data;
  const site = sites[0];
  const index = site
    ? readFileSync(path.join(t.dataDir, 'accounts', accountId, 'sites', site.id, 'current', 'index.html'), 'utf8')
    : null;
  const forwarders = (await t.get(`/v1/email-forwarders?account_id=${accountId}`)).body.data.map(
    (f: { address: string; destinations: string[] }) => `${f.address}>${f.destinations.join(',')}`,
  );
  return {
    records,
    hash,
    messages: messages.sort(),
    hostnames: sites.map((s: { hostname: string }) => s.hostname),
    index,
    forwarders,
  };
}

describe('restore', () => {
  it('puts back zones, mailboxes with their messages and passwords, and site files, re-creating what was deleted', async () => {
    const acc = await createAccountOnNewPlan(t);
    await t.post('/v1/domains', { account_id: acc.id, name: NAME, mail_enabled: true });
    await t.post(`/v1/domains/${NAME}/records`, { name: 'www', type: 'A', ttl: 300, content: '192.0.2.10' });
    await t.post(`/v1/domains/${NAME}/records`, { name: '@', type: 'TXT', ttl: 3600, content: '"hello backup"' });
    const box = (await t.post('/v1/emails', { address: `info@${NAME}`, password: PASSWORD, quota_mb: 10 })).body;
    await t.post('/v1/email-forwarders', { address: `sales@${NAME}`, destinations: ['team@example.com'] });
    const site = (await t.post('/v1/sites', { account_id: acc.id, hostname: `www.${NAME}` })).body;
    await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).body.status === 'active');
    await deployLive(site.id, { 'index.html': 'version one', 'about/index.html': 'about' });
    const maildir = path.join(t.dataDir, 'accounts', acc.id, 'mail', NAME, box.id, 'Maildir');
    await eventually(async () => existsSync(maildir));
    mkdirSync(path.join(maildir, 'new'), { recursive: true });
    writeFileSync(path.join(maildir, 'new', '1700000000.M1.host'), 'Subject: keep me\r\n\r\nimportant\r\n');
    const before = await state(acc.id, box.id);
    expect(before.messages).toHaveLength(1);

    const backup = (await t.post('/v1/backups', { account_id: acc.id })).body;
    expect((await done(backup.operation.id)).status).toBe('succeeded');

    // Change everything: records, the password, the messages; delete the site and the forwarder.
    const www = (await t.get(`/v1/domains/${NAME}/records?name=www`)).body.data[0];
    await t.request('DELETE', `/v1/domains/${NAME}/records/${www.id}`);
    await t.post(`/v1/domains/${NAME}/records`, { name: 'extra', type: 'A', ttl: 60, content: '192.0.2.99' });
    await t.request('PATCH', `/v1/emails/${box.id}`, { body: { password: 'a different passphrase' } });
    writeFileSync(path.join(maildir, 'new', '1700000001.M2.host'), 'Subject: new\r\n\r\nlater\r\n');
    const fwd = (await t.get(`/v1/email-forwarders?account_id=${acc.id}`)).body.data[0];
    await t.request('DELETE', `/v1/email-forwarders/${fwd.id}`);
    const deleting = await t.request('DELETE', `/v1/sites/${site.id}`);
    await done(deleting.body.operation.id);
    const changed = await state(acc.id, box.id);
    expect(changed).not.toEqual(before);

    const r = await t.post(`/v1/backups/${backup.id}/restore`, {});
    expect(r.status, r.text).toBe(202);
    expect(r.body.operation).toMatchObject({ type: 'backup.restore' });
    const op = await done(r.body.operation.id);
    expect(op.status, JSON.stringify(op.error)).toBe('succeeded');
    const after = await state(acc.id, box.id);
    expect(after).toEqual(before);
    // The restored release counts what the archive held of the site (the unpacking's own count).
    const restored = (await t.get(`/v1/sites?account_id=${acc.id}`)).body.data[0];
    const live = (await t.get(`/v1/sites/${restored.id}/deployments`)).body.data.find(
      (d: { status: string }) => d.status === 'live',
    );
    expect(live).toMatchObject({ file_count: 2, size_bytes: 'version one'.length + 'about'.length });
    expect((await t.get(`/v1/events?type=backup.restore.completed&resource_id=${backup.id}`)).body.data).toHaveLength(1);

    // Again: the same result, nothing doubled.
    const again = await t.post(`/v1/backups/${backup.id}/restore`, { include: ['dns', 'emails', 'sites'] });
    expect((await done(again.body.operation.id)).status).toBe('succeeded');
    expect(await state(acc.id, box.id)).toEqual(before);
  }, 120_000);

  it('puts a mailbox back only while no apply of its domain runs (one would create folders in it meanwhile)', async () => {
    const acc = await createAccountOnNewPlan(t);
    const name = `lock-${Date.now().toString(36)}.io`;
    const domain = (await t.post('/v1/domains', { account_id: acc.id, name, mail_enabled: true })).body;
    const box = (await t.post('/v1/emails', { address: `box@${name}`, password: PASSWORD })).body;
    const maildir = path.join(t.dataDir, 'accounts', acc.id, 'mail', name, box.id, 'Maildir');
    await eventually(async () => existsSync(maildir));
    const backup = (await t.post('/v1/backups', { account_id: acc.id, include: ['emails'] })).body;
    expect((await done(backup.operation.id)).status).toBe('succeeded');
    const later = path.join(maildir, 'new', '1700000001.M1P1.later');
    writeFileSync(later, 'Subject: after the backup\r\n\r\nhi\r\n');

    // The domain's apply lock held (as an apply running would): the restore reaches its mailboxes
    // and waits there, leaving the mailbox as it is until the lock is free.
    let restoreOp = '';
    await t.db.withSessionLock(`mail.apply:${domain.id as string}`, async () => {
      restoreOp = (await t.post(`/v1/backups/${backup.id}/restore`, { include: ['emails'] })).body.operation.id;
      await eventually(async () => (await t.get(`/v1/operations/${restoreOp}`)).body.progress >= 80);
      // An absence cannot be waited for: a moment in which an unguarded restore would have replaced it.
      await new Promise((r) => setTimeout(r, 300));
      expect(existsSync(later)).toBe(true);
    });
    expect((await done(restoreOp)).status).toBe('succeeded');
    expect(existsSync(later)).toBe(false);
  });

  it('refuses a damaged archive (checksum) and changes nothing; include must be in the backup', async () => {
    const acc = await createAccountOnNewPlan(t);
    await t.post('/v1/domains', { account_id: acc.id, name: 'damaged.io' });
    const backup = (await t.post('/v1/backups', { account_id: acc.id, include: ['dns'] })).body;
    await done(backup.operation.id);
    expect((await t.post(`/v1/backups/${backup.id}/restore`, { include: ['sites'] })).status).toBe(422);
    await t.post('/v1/domains/damaged.io/records', { name: 'after', type: 'A', ttl: 60, content: '192.0.2.1' });

    // Damage that stops the unpacking (inside the compressed data), and damage that does not (a
    // gzip member's timestamp): both are caught by the checksum, read as the archive is unpacked.
    const file = path.join(t.dataDir, 'backups', `${backup.id}.tar.gz`);
    const original = readFileSync(file);
    for (const at of [original.length - 20, 4]) {
      const bytes = Buffer.from(original);
      bytes[at] = (bytes[at] ?? 0) ^ 0xff;
      writeFileSync(file, bytes);
      const r = await t.post(`/v1/backups/${backup.id}/restore`, {});
      const op = await done(r.body.operation.id);
      expect(op, `damage at ${at}`).toMatchObject({ status: 'failed', error: { code: 'checksum_mismatch' } });
      expect((await t.get('/v1/domains/damaged.io/records?name=after')).body.data).toHaveLength(1);
    }
    expect((await t.get(`/v1/events?type=backup.restore.failed&resource_id=${backup.id}`)).body.data).toHaveLength(2);
  });
});
