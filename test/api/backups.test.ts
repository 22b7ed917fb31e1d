import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBackupStorage } from '../../src/modules/backups/storage.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { members, tarGz } from '../helpers/archives.js';
import { createAccount, createPlan, world } from '../helpers/fixtures.js';

/** Backups: the archive and its contents, checksum, download with Range, limits, reach. */
const PASSWORD = 'correct horse battery staple';
let t: TestApp;
let w: Awaited<ReturnType<typeof world>>;

async function download(id: string, headers: Record<string, string> = {}, token?: string) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/v1/backups/${id}/download`,
    headers: { authorization: `Bearer ${token ?? 'test-operator-token-0123456789-abcdefghij'}`, ...headers },
  });
  return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
}

async function completed(id: string) {
  return eventually(async () => {
    const b = (await t.get(`/v1/backups/${id}`)).body;
    return b.status === 'completed' || b.status === 'failed' ? b : null;
  });
}

/** An account with a zone, a mailbox holding one message, and a site with a live release. */
async function populatedAccount(token: string, planId: string, name: string) {
  const acc = await createAccount(t, planId, token);
  await t.post('/v1/domains', { account_id: acc.id, name, mail_enabled: true }, token);
  const box = (await t.post('/v1/emails', { address: `info@${name}`, password: PASSWORD, quota_mb: 10 }, token)).body;
  const site = (await t.post('/v1/sites', { account_id: acc.id, hostname: `www.${name}` }, token)).body;
  await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).body.status === 'active');
  const deployed = await t.request('POST', `/v1/sites/${site.id}/deployments`, {
    raw: tarGz([
      { path: 'index.html', content: `<h1>${name}</h1>` },
      { path: 'css/site.css', content: 'body{}' },
    ]),
    headers: { 'content-type': 'application/gzip' },
  });
  await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).body.current_deployment_id === deployed.body.id);
  const maildir = await eventually(async () => {
    const dir = path.join(t.dataDir, 'accounts', acc.id, 'mail', name, box.id, 'Maildir');
    return existsSync(dir) ? dir : null;
  });
  mkdirSync(path.join(maildir, 'new'), { recursive: true });
  writeFileSync(path.join(maildir, 'new', '1700000000.M1P1.host'), 'Subject: hello\r\n\r\nkept safe\r\n');
  return { acc, box, site };
}

beforeAll(async () => {
  t = await createTestApp();
  w = await world(t);
});
afterAll(async () => t.close());

describe('backups', () => {
  it('archives the sites, Maildirs and zones with a manifest; checksummed; announced by backup.completed', async () => {
    const { acc, box, site } = await populatedAccount(w.tokenA, w.plan.id, 'backed-up.io');
    const r = await t.post('/v1/backups', { account_id: acc.id }, w.tokenA);
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({
      status: 'queued',
      trigger: 'manual',
      include: ['sites', 'emails', 'dns', 'databases', 'cron_jobs', 'ssh'],
    });
    expect(r.body.operation).toMatchObject({ type: 'backup.create', resource: { type: 'backup', id: r.body.id } });
    const b = await completed(r.body.id);
    expect(b.status, JSON.stringify(b.error)).toBe('completed');
    expect(b.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(b.contents).toMatchObject({ sites: 1, emails: 1, email_forwarders: 0, domains: 1, databases: 0 });
    const op = (await t.get(`/v1/operations/${r.body.operation.id}`)).body;
    expect(op).toMatchObject({ status: 'succeeded', progress: 100 });
    const events = (await t.get(`/v1/events?type=backup.completed&resource_id=${b.id}`)).body.data;
    expect(events).toHaveLength(1);

    const whole = await download(b.id, {}, w.tokenA);
    expect(whole.status).toBe(200);
    expect(whole.headers['content-type']).toBe('application/gzip');
    expect(whole.body.length).toBe(b.size_bytes);
    expect(createHash('sha256').update(whole.body).digest('hex')).toBe(b.sha256);
    expect(whole.headers['repr-digest']).toBe(`sha-256=:${Buffer.from(b.sha256, 'hex').toString('base64')}:`);

    const files = await members(whole.body);
    expect(files.get(`sites/${site.id}/index.html`)?.toString()).toBe('<h1>backed-up.io</h1>');
    expect(files.get(`sites/${site.id}/css/site.css`)?.toString()).toBe('body{}');
    expect(files.get(`mail/backed-up.io/${box.id}/Maildir/new/1700000000.M1P1.host`)?.toString()).toContain('kept safe');
    expect(files.get('dns/backed-up.io.zone')?.toString()).toMatch(/SOA/);
    const manifest = JSON.parse(files.get('manifest.json')?.toString() ?? '{}');
    expect(manifest.account.id).toBe(acc.id);
    expect(manifest.domains[0].records.length).toBeGreaterThan(2);
    expect(manifest.emails[0]).toMatchObject({ id: box.id, address: 'info@backed-up.io' });
    expect(manifest.sites[0]).toMatchObject({ id: site.id, current_deployment_id: expect.any(String) });
    const credentials = files.get('mail-credentials.json')?.toString() ?? '';
    expect(credentials).toContain('{ARGON2ID}');
    expect(whole.body.includes(Buffer.from(PASSWORD))).toBe(false);
    expect([...files.values()].some((f) => f.includes(Buffer.from(PASSWORD)))).toBe(false);

    // Ranges: a part, the tail, past the end.
    const part = await download(b.id, { range: 'bytes=0-99' }, w.tokenA);
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 0-99/${b.size_bytes}`);
    expect(part.body.equals(whole.body.subarray(0, 100))).toBe(true);
    const tail = await download(b.id, { range: 'bytes=-10' }, w.tokenA);
    expect(tail.status).toBe(206);
    expect(tail.body.equals(whole.body.subarray(whole.body.length - 10))).toBe(true);
    const from = await download(b.id, { range: `bytes=${b.size_bytes - 5}-` }, w.tokenA);
    expect(from.body.equals(whole.body.subarray(whole.body.length - 5))).toBe(true);
    const beyond = await download(b.id, { range: `bytes=${b.size_bytes}-` }, w.tokenA);
    expect(beyond.status).toBe(416);
    expect(beyond.headers['content-range']).toBe(`bytes */${b.size_bytes}`);
    expect(beyond.headers['content-type']).toContain('application/problem+json');

    // Reach and scope.
    expect((await t.get(`/v1/backups/${b.id}`, w.tokenB)).status).toBe(404);
    expect((await download(b.id, {}, w.tokenB)).status).toBe(404);
    expect((await t.get(`/v1/backups/${b.id}`, w.readOnly)).status).toBe(403);
    expect((await t.get(`/v1/backups?account_id=${acc.id}`, w.tokenB)).body.data).toEqual([]);
    expect((await t.get(`/v1/backups?account_id=${acc.id}`, w.tokenA)).body.data.map((x: { id: string }) => x.id)).toEqual([
      b.id,
    ]);

    // Delete: the archive goes with it.
    const stored = path.join(t.dataDir, 'backups', `${b.id}.tar.gz`);
    expect(existsSync(stored)).toBe(true);
    expect((await t.request('DELETE', `/v1/backups/${b.id}`, { token: w.tokenA })).status).toBe(204);
    expect(existsSync(stored)).toBe(false);
    expect((await t.get(`/v1/backups/${b.id}`)).status).toBe(404);
  });

  it("a backup requested right after a deployment's 202 holds that deployment", async () => {
    const { acc, site } = await populatedAccount(w.tokenA, w.plan.id, 'after-deploy.io');
    const v2 = await t.request('POST', `/v1/sites/${site.id}/deployments`, {
      raw: tarGz([{ path: 'index.html', content: 'v2' }]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(v2.status).toBe(202);
    const r = await t.post('/v1/backups', { account_id: acc.id, include: ['sites'] }, w.tokenA);
    const b = await completed(r.body.id);
    const files = await members((await download(b.id)).body);
    expect(files.get(`sites/${site.id}/index.html`)?.toString()).toBe('v2');
    expect(b.contents.sites).toBe(1);
  });

  it('waits while a deployment of the account is pending, and runs once none is', async () => {
    const { acc, site } = await populatedAccount(w.tokenA, w.plan.id, 'pending-deploy.io');
    // A deployment that stays pending until the test lets it go (its switch job never runs).
    const pendingId = 'dpl_01jd3x9v6ef8tb2q4w5n7k8m9p';
    await t.db.query(`INSERT INTO deployments (id, site_id, format, size_bytes, file_count) VALUES ($1, $2, 'tar.gz', 0, 0)`, [
      pendingId,
      site.id,
    ]);
    const r = await t.post('/v1/backups', { account_id: acc.id, include: ['sites'] }, w.tokenA);
    await eventually(async () => (await t.get(`/v1/operations/${r.body.operation.id}`)).body.status === 'running');
    for (let i = 0; i < 10; i++) {
      expect((await t.get(`/v1/backups/${r.body.id}`)).body.status).toBe('running');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await t.db.query(`UPDATE deployments SET status = 'failed' WHERE id = $1`, [pendingId]);
    expect((await completed(r.body.id)).status).toBe('completed');
  });

  it('include narrows the archive', async () => {
    const acc = await createAccount(t, w.plan.id, w.tokenA);
    await t.post('/v1/domains', { account_id: acc.id, name: 'dns-only.io' }, w.tokenA);
    const r = await t.post('/v1/backups', { account_id: acc.id, include: ['dns'] }, w.tokenA);
    const b = await completed(r.body.id);
    expect(b.contents).toEqual({ domains: 1, files: 2 });
    const files = await members((await download(b.id)).body);
    expect([...files.keys()].filter((k) => !k.endsWith('/')).sort()).toEqual(['dns/dns-only.io.zone', 'manifest.json']);
  });

  it('refuses bad input and other accounts, and enforces max_backups', async () => {
    const plan = await createPlan(t, undefined, { max_backups: 1 });
    const acc = await createAccount(t, plan.id);
    for (const body of [
      { account_id: acc.id, include: ['files'] },
      { account_id: acc.id, include: [] },
      { account_id: acc.id, extra: 1 },
      {},
    ]) {
      const r = await t.post('/v1/backups', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
    expect((await t.post('/v1/backups', { account_id: w.accountA.id }, w.tokenB)).status).toBe(404);
    const first = await t.post('/v1/backups', { account_id: acc.id });
    await completed(first.body.id);
    const second = await t.post('/v1/backups', { account_id: acc.id });
    expect(second.status).toBe(403);
    expect(second.body).toMatchObject({ code: 'quota_exceeded', limit: 1, usage: 1 });
    expect((await t.get(`/v1/backups?account_id=${acc.id}`)).body.data).toHaveLength(1);
    expect((await download('bak_01jd3x9v6ef8tb2q4w5n7k8m9p')).status).toBe(404);
  });

  it('a failure while storing leaves no archive and marks the backup failed', async () => {
    const broken = new (class extends LocalBackupStorage {
      override async put(key: string, body: AsyncIterable<Uint8Array>) {
        let seen = 0;
        return super.put(
          key,
          (async function* failing() {
            for await (const chunk of body) {
              seen += chunk.length;
              if (seen > 100) throw new Error(`ENOSPC: no space left on device, write '${path.join(t.dataDir, 'backups', key)}'`);
              yield chunk;
            }
          })(),
        );
      }
    })(path.join(t.dataDir, 'broken-backups'));
    // Its own database: no other app's worker may take the job.
    const f = await createTestApp({ deps: { backupStorage: broken } });
    try {
      const acc = await createAccount(f, (await createPlan(f)).id);
      await f.post('/v1/domains', { account_id: acc.id, name: 'unlucky.io' });
      const r = await f.post('/v1/backups', { account_id: acc.id, include: ['dns'] });
      const b = await eventually(async () => {
        const row = (await f.get(`/v1/backups/${r.body.id}`)).body;
        return row.status === 'failed' ? row : null;
      });
      // The tenant reads which file, not where the server keeps it.
      expect(b.error).toEqual({
        code: 'backup_failed',
        detail: expect.stringMatching(/^ENOSPC: no space left on device, write '…\/[^/]+'$/),
      });
      expect(b.error.detail).toContain(b.id);
      expect((await f.get(`/v1/operations/${r.body.operation.id}`)).body.status).toBe('failed');
      expect(readdirSync(path.join(t.dataDir, 'broken-backups'))).toEqual([]);
      const dl = await f.app.inject({
        method: 'GET',
        url: `/v1/backups/${b.id}/download`,
        headers: { authorization: 'Bearer test-operator-token-0123456789-abcdefghij' },
      });
      expect(dl.statusCode).toBe(409);
      expect((await f.get(`/v1/events?type=backup.failed&resource_id=${b.id}`)).body.data).toHaveLength(1);
    } finally {
      await f.close();
    }
  });
});

describe('crashes and termination', () => {
  it('a backup cut off mid-write (running, a partial file) is finished by the next process; never a half archive', async () => {
    const first = await createTestApp({ jobs: false });
    const acc = await createAccount(first, (await createPlan(first)).id);
    await first.post('/v1/domains', { account_id: acc.id, name: 'crashed.io' });
    const queued = (await first.post('/v1/backups', { account_id: acc.id, include: ['dns'] })).body;
    // What a process killed while writing leaves: the backup and its operation running, a partial file.
    await first.db.query(`UPDATE backups SET status = 'running' WHERE id = $1`, [queued.id]);
    await first.db.query(`UPDATE operations SET status = 'running' WHERE id = $1`, [queued.operation.id]);
    mkdirSync(path.join(first.dataDir, 'backups'), { recursive: true });
    writeFileSync(path.join(first.dataDir, 'backups', `${queued.id}.tar.gz.partial`), 'half an archive');
    expect((await first.get(`/v1/backups/${queued.id}`)).body.status).toBe('running');

    const next = await createTestApp({ db: first.db, dataDir: first.dataDir });
    try {
      const b = await eventually(async () => {
        const row = (await next.get(`/v1/backups/${queued.id}`)).body;
        return row.status === 'completed' ? row : null;
      });
      expect(readdirSync(path.join(first.dataDir, 'backups'))).toEqual([`${queued.id}.tar.gz`]);
      const bytes = readFileSync(path.join(first.dataDir, 'backups', `${queued.id}.tar.gz`));
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(b.sha256);
      expect([...(await members(bytes)).keys()]).toContain('dns/crashed.io.zone');
    } finally {
      await next.close();
      await first.close();
    }
  });

  it('counts completed backups in usage, and terminating the account removes its archives', async () => {
    const acc = await createAccount(t, w.plan.id);
    const b = (await t.post('/v1/backups', { account_id: acc.id, include: ['dns'] })).body;
    await completed(b.id);
    expect((await t.get(`/v1/accounts/${acc.id}/usage`)).body.usage.backups).toBe(1);
    const archive = path.join(t.dataDir, 'backups', `${b.id}.tar.gz`);
    expect(existsSync(archive)).toBe(true);
    const del = await t.request('DELETE', `/v1/accounts/${acc.id}`);
    await eventually(async () => (await t.get(`/v1/operations/${del.body.operation.id}`)).body.status === 'succeeded');
    expect(existsSync(archive)).toBe(false);
    expect((await t.get(`/v1/backups/${b.id}`)).status).toBe(404);
  });
});

describe('one backup at a time', () => {
  it('a second backup while one is queued is 409 invalid_state; a queued one cannot be deleted', async () => {
    const q = await createTestApp({ jobs: false });
    try {
      const plan = await createPlan(q);
      const acc = await createAccount(q, plan.id);
      const first = await q.post('/v1/backups', { account_id: acc.id });
      expect(first.status).toBe(202);
      const second = await q.post('/v1/backups', { account_id: acc.id });
      expect(second.status).toBe(409);
      expect(second.body.code).toBe('invalid_state');
      expect((await q.request('DELETE', `/v1/backups/${first.body.id}`)).status).toBe(409);
      const dl = await q.app.inject({
        method: 'GET',
        url: `/v1/backups/${first.body.id}/download`,
        headers: { authorization: 'Bearer test-operator-token-0123456789-abcdefghij' },
      });
      expect(dl.statusCode).toBe(409);
    } finally {
      await q.close();
    }
  });
});
