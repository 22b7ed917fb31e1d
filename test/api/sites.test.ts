import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { paxRecord, tarGz, zip } from '../helpers/archives.js';
import { freshDb } from '../helpers/db.js';
import { createAccount, createPlan, createToken, world } from '../helpers/fixtures.js';
import { testDir } from '../helpers/temp-dir.js';

let t: TestApp;
let w: Awaited<ReturnType<typeof world>>;
let n = 0;
beforeAll(async () => {
  t = await createTestApp();
  w = await world(t);
  await t.request('PATCH', `/v1/accounts/${w.accountA.id}`, { body: { limit_overrides: { max_domains: 100, max_sites: 100 } } });
});
afterAll(async () => t.close());

const domainOf = async (accountId = w.accountA.id) => {
  const r = await t.post('/v1/domains', { account_id: accountId, name: `site${n++}-${Date.now().toString(36)}.com` });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.name as string;
};
const siteFiles = (site: { id: string; account_id: string }) =>
  path.join(t.dataDir, 'accounts', site.account_id, 'sites', site.id);
const serverBlock = (id: string) => readFileSync(path.join(t.dataDir, 'rendered', 'web', 'sites', `${id}.conf`), 'utf8');
const get = async (id: string) => (await t.get(`/v1/sites/${id}`)).body;

async function activeSite(accountId = w.accountA.id, aliases: string[] = []) {
  const name = await domainOf(accountId);
  const r = await t.post('/v1/sites', { account_id: accountId, hostname: name, aliases: aliases.map((a) => `${a}.${name}`) });
  if (r.status !== 202) throw new Error(r.text);
  // Active, and its certificate (the plan has `ssl`) issued: the issuance moves the site's version on.
  await eventually(async () => {
    const s = await get(r.body.id);
    return s.status === 'active' && s.tls.status === 'active';
  });
  return { ...r.body, name } as { id: string; account_id: string; name: string };
}

async function deploy(siteId: string, body: Buffer, type = 'application/gzip') {
  return t.request('POST', `/v1/sites/${siteId}/deployments`, { raw: body, headers: { 'content-type': type } });
}
async function deployLive(siteId: string, body: Buffer, type?: string) {
  const r = await deploy(siteId, body, type);
  if (r.status !== 202) throw new Error(r.text);
  await eventually(async () => (await get(siteId)).current_deployment_id === r.body.id);
  return r.body as { id: string };
}

describe('site lifecycle', () => {
  it('POST is 202 provisioning with an operation; the site turns active and is served', async () => {
    const name = await domainOf();
    const r = await t.post('/v1/sites', { account_id: w.accountA.id, hostname: `WWW.${name}`, aliases: [name] });
    expect(r.status, r.text).toBe(202);
    expect(r.headers.location).toBe(`/v1/operations/${r.body.operation.id}`);
    expect(r.body).toMatchObject({
      hostname: `www.${name}`,
      aliases: [name],
      runtime: 'static',
      status: 'provisioning',
      current_deployment_id: null,
      url: `http://www.${name}/`,
      disk_bytes: 0,
      tls: { mode: 'auto', status: 'pending', expires_at: null },
      operation: { type: 'site.provision', status: 'queued', resource: { type: 'site', id: r.body.id } },
    });
    expect(r.body.id).toMatch(/^site_[0-9a-z]{26}$/);
    await eventually(async () => (await t.get(`/v1/operations/${r.body.operation.id}`)).body.status === 'succeeded');
    await eventually(async () => (await get(r.body.id)).sync_state === 'in_sync');
    expect((await get(r.body.id)).status).toBe('active');
    expect(serverBlock(r.body.id)).toContain(`server_name www.${name} ${name};`);
    // The plan includes `ssl`: a certificate follows (certificates.test.ts has the rest).
    await eventually(async () => (await get(r.body.id)).tls.status === 'active');
    const types = (await t.get(`/v1/events?resource_id=${r.body.id}`)).body.data.map((e: { type: string }) => e.type);
    expect(types.sort()).toEqual(['site.active', 'site.certificate.issued', 'site.created']);
  });

  it('hostnames must be domains of the account or names under them, each serving one site', async () => {
    const name = await domainOf();
    const foreign = await domainOf(w.accountB.id);
    const bad = await t.post('/v1/sites', {
      account_id: w.accountA.id,
      hostname: 'not-ours.org',
      aliases: [foreign, `x.${name}`, `x.${name}`, 'x.localhost'],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { pointer: string; code: string }) => `${e.pointer} ${e.code}`)).toEqual([
      '/hostname not_your_domain',
      '/aliases/0 not_your_domain',
      '/aliases/2 duplicate',
      '/aliases/3 special_use_tld',
    ]);
    expect((await t.post('/v1/sites', { account_id: w.accountA.id, hostname: `shop.${name}` })).status).toBe(202);
    const taken = await t.post('/v1/sites', { account_id: w.accountA.id, hostname: `blog.${name}`, aliases: [`SHOP.${name}`] });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('already_exists');
    expect((await t.post('/v1/sites', { account_id: w.accountB.id, hostname: foreign }, w.tokenA)).status).toBe(404);
    expect((await t.post('/v1/sites', { account_id: w.accountA.id, hostname: name, tls: 'x' })).status).toBe(422);
  });

  it('max_sites is a 403 quota_exceeded', async () => {
    const plan = await createPlan(t, undefined, { max_sites: 1 });
    const account = await createAccount(t, plan.id);
    const name = await domainOf(account.id);
    expect((await t.post('/v1/sites', { account_id: account.id, hostname: name })).status).toBe(202);
    const second = await t.post('/v1/sites', { account_id: account.id, hostname: `www.${name}` });
    expect(second.status).toBe(403);
    expect(second.body).toMatchObject({ code: 'quota_exceeded', limit: 1, usage: 1 });
    expect((await t.get(`/v1/accounts/${account.id}/usage`)).body.usage.sites).toBe(1);
  });

  it('lists with filters; reach applies; malformed or foreign ids are 404', async () => {
    const site = await activeSite();
    const ids = async (q: string, token?: string) =>
      (await t.get(`/v1/sites?limit=200&${q}`, token)).body.data.map((s: { id: string }) => s.id);
    expect(await ids(`q=${site.name}`)).toEqual([site.id]);
    expect(await ids('status=active', w.tokenAccountA)).toContain(site.id);
    expect(await ids('', w.tokenB)).not.toContain(site.id);
    expect((await t.get(`/v1/sites/${site.id}`, w.tokenB)).status).toBe(404);
    expect((await t.request('DELETE', `/v1/sites/${site.id}`, { token: w.tokenB })).status).toBe(404);
    expect((await t.get('/v1/sites/site_123')).status).toBe(404);
    expect((await t.request('DELETE', '/v1/sites/not-an-id')).status).toBe(404);
    expect((await t.get('/v1/sites?nope=1')).status).toBe(400);
  });

  it('PATCH changes the aliases the server block answers to; If-Match guards; the hostname is fixed', async () => {
    const site = await activeSite();
    const current = await get(site.id);
    const stale = await t.request('PATCH', `/v1/sites/${site.id}`, { body: { aliases: [] }, headers: { 'if-match': '"999"' } });
    expect(stale.status).toBe(412);
    expect((await t.request('PATCH', `/v1/sites/${site.id}`, { body: { hostname: 'x.com' } })).status).toBe(422);
    const r = await t.request('PATCH', `/v1/sites/${site.id}`, {
      body: { aliases: [`www.${site.name}`] },
      headers: { 'if-match': `"${current.version}"` },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.aliases).toEqual([`www.${site.name}`]);
    await eventually(async () => serverBlock(site.id).includes(`server_name ${site.name} www.${site.name};`));
    expect((await t.request('PUT', `/v1/sites/${site.id}`, { body: { aliases: [] } })).status).toBe(422);
    const put = await t.request('PUT', `/v1/sites/${site.id}`, { body: { aliases: [], runtime: 'static' } });
    expect(put.body.aliases).toEqual([]);
  });

  it('a merge patch may not remove a member a site cannot be without (422 naming it); nothing changes', async () => {
    const site = await activeSite();
    const before = await get(site.id);
    for (const [body, pointer] of [
      [{ tls: { mode: null } }, '/tls/mode'],
      [{ tls: { hsts: null } }, '/tls/hsts'],
      [{ php: { memory_limit_mb: null } }, '/php/memory_limit_mb'],
    ] as const) {
      const r = await t.request('PATCH', `/v1/sites/${site.id}`, { body });
      expect(r.status, r.text).toBe(422);
      expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    }
    expect((await get(site.id)).version).toBe(before.version);
  });

  it('suspension (of the site or its account) serves the 503 page; only operators and resellers suspend', async () => {
    const site = await activeSite();
    const owner = await createToken(t, { principal: { kind: 'account', id: w.accountA.id } });
    const refused = await t.post(`/v1/sites/${site.id}/suspend`, { reason: 'abuse' }, owner);
    expect(refused.status).toBe(403);
    const s = await t.post(`/v1/sites/${site.id}/suspend`, { reason: 'abuse' }, w.tokenA);
    expect(s.body).toMatchObject({ status: 'suspended', suspension: { reason: 'abuse' } });
    await eventually(async () => serverBlock(site.id).includes('return 503;'));
    expect(readFileSync(path.join(t.dataDir, 'rendered', 'web', 'pages', 'suspended.html'), 'utf8')).toContain('suspended');
    await t.post(`/v1/sites/${site.id}/unsuspend`, undefined, w.tokenA);
    await eventually(async () => !serverBlock(site.id).includes('return 503;'));

    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id);
    const theirs = await activeSite(account.id);
    await t.post(`/v1/accounts/${account.id}/suspend`, { reason: 'unpaid' });
    await eventually(async () => serverBlock(theirs.id).includes('return 503;'));
    await t.post(`/v1/accounts/${account.id}/unsuspend`);
    await eventually(async () => !serverBlock(theirs.id).includes('return 503;'));
  });
});

describe('deployments', () => {
  it('a tar.gz goes live atomically; a second supersedes it; activate rolls back', async () => {
    const site = await activeSite();
    const firstArchive = tarGz([
      { path: 'index.html', content: 'v1' },
      { path: 'img/', type: '5' },
      { path: 'img/a.txt', content: 'aaaa' },
    ]);
    const first = await deployLive(site.id, firstArchive);
    const dir = siteFiles(site);
    expect(readlinkSync(path.join(dir, 'current'))).toBe(`releases/${first.id}`);
    expect(readFileSync(path.join(dir, 'current', 'index.html'), 'utf8')).toBe('v1');
    expect(await get(site.id)).toMatchObject({ current_deployment_id: first.id, disk_bytes: 6 });

    const second = await deployLive(site.id, await zip([{ path: 'index.html', content: 'v2 from zip' }]), 'application/zip');
    expect(readFileSync(path.join(dir, 'current', 'index.html'), 'utf8')).toBe('v2 from zip');
    const list = (await t.get(`/v1/sites/${site.id}/deployments`)).body.data;
    expect(list.map((d: { id: string; status: string }) => `${d.id} ${d.status}`)).toEqual([
      `${second.id} live`,
      `${first.id} superseded`,
    ]);
    expect((await t.get(`/v1/sites/${site.id}/deployments/${first.id}`)).body).toMatchObject({
      format: 'tar.gz',
      file_count: 2,
      size_bytes: 6,
      archive_bytes: firstArchive.length,
    });

    const back = await t.post(`/v1/sites/${site.id}/deployments/${first.id}/activate`);
    expect(back.status).toBe(202);
    expect(back.body.operation.type).toBe('site.deploy');
    await eventually(async () => (await get(site.id)).current_deployment_id === first.id);
    expect(readFileSync(path.join(dir, 'current', 'index.html'), 'utf8')).toBe('v1');
    const events = (await t.get(`/v1/events?type=site.deployment.live&limit=200`)).body.data.filter(
      (e: { resource: { id: string } }) => [first.id, second.id].includes(e.resource.id),
    );
    expect(events).toHaveLength(3);
  });

  it('unpacks many files, large ones and links whole; a member given twice keeps the later one (tar and zip)', async () => {
    const site = await activeSite();
    const big = randomBytes(3 * 1024 * 1024);
    const files = Array.from({ length: 300 }, (_, i) => ({ path: `d${i % 7}/f${i}.txt`, content: `file ${i}` }));
    await deployLive(
      site.id,
      tarGz([
        ...files,
        { path: 'big.bin', content: big },
        { path: 'same.txt', content: 'first' },
        { path: 'same.txt', content: 'second' },
        { path: 'hard.bin', type: '1', linkpath: 'big.bin' },
        { path: 'd0/up', type: '2', linkpath: '../same.txt' },
      ]),
    );
    const current = path.join(siteFiles(site), 'current');
    expect(readFileSync(path.join(current, 'd5/f299.txt'), 'utf8')).toBe('file 299');
    expect(readFileSync(path.join(current, 'big.bin')).equals(big)).toBe(true);
    expect(readFileSync(path.join(current, 'hard.bin')).equals(big)).toBe(true);
    expect(readFileSync(path.join(current, 'same.txt'), 'utf8')).toBe('second');
    expect(readFileSync(path.join(current, 'd0/up'), 'utf8')).toBe('second');
    const deployment = (await t.get(`/v1/sites/${site.id}/deployments`)).body.data[0];
    expect(deployment).toMatchObject({
      file_count: 303,
      size_bytes: big.length + files.reduce((n, f) => n + f.content.length, 0) + 11,
    });

    await deployLive(
      site.id,
      await zip([
        { path: 'same.txt', content: 'first' },
        { path: 'big.bin', content: big },
        { path: 'same.txt', content: 'second' },
      ]),
      'application/zip',
    );
    expect(readFileSync(path.join(current, 'same.txt'), 'utf8')).toBe('second');
    expect(readFileSync(path.join(current, 'big.bin')).equals(big)).toBe(true);
  });

  it('refuses escaping, absolute, linked-outside and device entries with 422, keeping nothing', async () => {
    const site = await activeSite();
    const live = await deployLive(site.id, tarGz([{ path: 'index.html', content: 'safe' }]));
    // A deflated member whose central directory claims 10 bytes: yauzl finds out while reading it.
    const lyingZip = await zip([{ path: 'lie.txt', content: 'hello '.repeat(50) }]);
    lyingZip.writeUInt32LE(10, lyingZip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 24);
    const truncatedTarGz = tarGz([{ path: 'noise.bin', content: randomBytes(3_000_000) }]).subarray(0, 2_000_000);
    const cases: [string, Buffer, string, string?][] = [
      [
        'tar ../',
        tarGz([
          { path: 'ok.txt', content: 'x' },
          { path: '../../evil.txt', content: 'x' },
        ]),
        'path_escapes',
      ],
      ['tar absolute', tarGz([{ path: '/etc/evil', content: 'x' }]), 'absolute_path'],
      ['tar symlink out', tarGz([{ path: 'out', type: '2', linkpath: '../../../../etc/passwd' }]), 'link_escapes'],
      ['tar absolute symlink', tarGz([{ path: 'out', type: '2', linkpath: '/etc/passwd' }]), 'link_escapes'],
      ['tar hard link out', tarGz([{ path: 'hard', type: '1', linkpath: '../secret' }]), 'link_escapes'],
      ['tar char device', tarGz([{ path: 'null', type: '3' }]), 'device_file'],
      ['tar fifo', tarGz([{ path: 'pipe', type: '6' }]), 'device_file'],
      [
        'tar sparse file',
        tarGz([
          { path: 'ok.txt', content: 'x' },
          { path: 'holes', type: 'S' },
        ]),
        'unsupported_entry',
      ],
      ['gzip of something not tar', gzipSync('a text file, gzipped, is not a tar archive\n'.repeat(20)), 'invalid_archive'],
      [
        'tar pax path escaping',
        tarGz([{ path: 'x', type: 'x', content: paxRecord('path', '../up') }, { path: 'f' }]),
        'path_escapes',
      ],
      [
        'tar file where a directory goes',
        tarGz([
          { path: 'a', content: 'x' },
          { path: 'a/b', content: 'y' },
        ]),
        'invalid_archive',
      ],
      ['tar hard link to nothing', tarGz([{ path: 'hard', type: '1', linkpath: 'missing' }]), 'invalid_archive'],
      [
        'tar links escaping together',
        tarGz([
          { path: 'x/', type: '5' },
          { path: 'x/up', type: '2', linkpath: '..' },
          { path: 'x/esc', type: '2', linkpath: 'up/..' },
        ]),
        'link_escapes',
      ],
      [
        'zip ../',
        await zip([{ path: 'aa/evil.txt', content: 'x' }], [['aa/evil.txt', '../evil.txt']]),
        'path_escapes',
        'application/zip',
      ],
      [
        'zip absolute',
        await zip([{ path: 'xetc/evil', content: 'x' }], [['xetc/evil', '/etc/evil']]),
        'absolute_path',
        'application/zip',
      ],
      [
        'zip symlink out',
        await zip([{ path: 'link', content: '../../../etc/passwd', mode: 0o120777 }]),
        'link_escapes',
        'application/zip',
      ],
      ['zip device', await zip([{ path: 'dev', content: '', mode: 0o020644 }]), 'device_file', 'application/zip'],
      ['zip name too long', await zip([{ path: `${'a'.repeat(300)}.txt`, content: 'x' }]), 'invalid_archive', 'application/zip'],
      [
        'zip NUL in a name',
        await zip([{ path: 'aXb.txt', content: 'x' }], [['aXb.txt', 'a\0b.txt']]),
        'invalid_archive',
        'application/zip',
      ],
      ['zip whose sizes lie', lyingZip, 'invalid_archive', 'application/zip'],
      [
        'zip NUL in a link target',
        await zip([{ path: 'link', content: 'a\0b', mode: 0o120777 }]),
        'invalid_archive',
        'application/zip',
      ],
      ['not an archive', Buffer.from('this is not gzip at all'), 'invalid_archive'],
      // The body ends in the middle of the gzip stream.
      ['tar.gz cut short', truncatedTarGz, 'invalid_archive'],
      ['not a zip', Buffer.from('PK but no'), 'invalid_archive', 'application/zip'],
    ];
    for (const [what, body, code, type] of cases) {
      const r = await deploy(site.id, body, type);
      expect(r.status, what).toBe(422);
      expect(r.body.errors[0].code, what).toBe(code);
      expect(r.text, what).not.toContain(t.dataDir);
    }
    const dir = siteFiles(site);
    expect(readdirSync(path.join(dir, 'releases'))).toEqual([live.id]);
    expect(readdirSync(path.join(t.dataDir, 'staging'))).toEqual([]);
    expect(existsSync(path.join(dir, '..', '..', 'evil.txt'))).toBe(false);
    expect((await t.get(`/v1/sites/${site.id}/deployments`)).body.data).toHaveLength(1);
    expect((await deploy(site.id, Buffer.from('x'), 'text/plain')).status).toBe(415);
  });

  it("more than the account's remaining disk is a 403; nothing is kept", async () => {
    const plan = await createPlan(t, undefined, { disk_quota_mb: 1 });
    const account = await createAccount(t, plan.id);
    const site = await activeSite(account.id);
    const r = await deploy(site.id, tarGz([{ path: 'big.bin', content: randomBytes(1_100_000) }]));
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('quota_exceeded');
    expect(readdirSync(path.join(siteFiles(site), 'releases'))).toEqual([]);
    expect((await t.get(`/v1/accounts/${account.id}/usage`)).body.usage.disk_bytes).toBe(0);
  });

  it('keeps the newest 5 releases and prunes the rest', async () => {
    const site = await activeSite();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await deployLive(site.id, tarGz([{ path: 'index.html', content: `v${i}` }]))).id);
    await eventually(async () => readdirSync(path.join(siteFiles(site), 'releases')).length === 5);
    expect(readdirSync(path.join(siteFiles(site), 'releases')).sort()).toEqual(ids.slice(2).sort());
    const statuses = (await t.get(`/v1/sites/${site.id}/deployments`)).body.data.map((d: { status: string }) => d.status);
    expect(statuses).toEqual(['live', 'superseded', 'superseded', 'superseded', 'superseded', 'pruned', 'pruned']);
    const gone = await t.post(`/v1/sites/${site.id}/deployments/${ids[0]}/activate`);
    expect(gone.status).toBe(409);
    expect((await get(site.id)).disk_bytes).toBe(10);
  });
});

describe('413', () => {
  it('an archive over BERTH_DEPLOY_MAX_MB is refused while it is received', async () => {
    const small = await createTestApp({ env: { BERTH_DEPLOY_MAX_MB: '1' } });
    try {
      const acc = await createAccount(small, (await createPlan(small)).id);
      await small.post('/v1/domains', { account_id: acc.id, name: 'limited.com' });
      const site = await small.post('/v1/sites', { account_id: acc.id, hostname: 'limited.com' });
      await eventually(async () => (await small.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
      const body = tarGz([{ path: 'noise.bin', content: randomBytes(1_200_000) }]);
      const r = await small.request('POST', `/v1/sites/${site.body.id}/deployments`, {
        raw: body,
        headers: { 'content-type': 'application/gzip' },
      });
      expect(r.status).toBe(413);
      expect(r.body.code).toBe('payload_too_large');
    } finally {
      await small.close();
    }
  });
});

describe('deleting sites', () => {
  it('DELETE is 202 deleting; a repeat shares the operation; then 404, site.deleted, files and server block gone', async () => {
    const site = await activeSite();
    await deployLive(site.id, tarGz([{ path: 'index.html', content: 'bye' }]));
    const first = await t.request('DELETE', `/v1/sites/${site.id}`);
    const again = await t.request('DELETE', `/v1/sites/${site.id}`);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ status: 'deleting', operation: { type: 'site.delete' } });
    expect(again.body.operation.id).toBe(first.body.operation.id);
    await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).status === 404);
    expect((await t.get(`/v1/operations/${first.body.operation.id}`)).body.status).toBe('succeeded');
    expect(existsSync(siteFiles(site))).toBe(false);
    expect(existsSync(path.join(t.dataDir, 'rendered', 'web', 'sites', `${site.id}.conf`))).toBe(false);
    expect((await t.get(`/v1/events?resource_id=${site.id}&type=site.deleted`)).body.data).toHaveLength(1);
  });

  it('a deletion accepted before a restart completes after it', async () => {
    const owned = await freshDb();
    const dataDir = testDir('site-restart');
    try {
      const before = await createTestApp({ db: owned.db, dataDir });
      const acc = await createAccount(before, (await createPlan(before)).id);
      await before.post('/v1/domains', { account_id: acc.id, name: 'restart.com' });
      const site = await before.post('/v1/sites', { account_id: acc.id, hostname: 'restart.com' });
      await eventually(async () => (await before.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
      await before.close();
      // A process that takes the request but dies before any worker runs it.
      const dying = await createTestApp({ db: owned.db, dataDir, jobs: false });
      const op = (await dying.request('DELETE', `/v1/sites/${site.body.id}`)).body.operation.id;
      await dying.close();
      const after = await createTestApp({ db: owned.db, dataDir });
      try {
        await eventually(async () => (await after.get(`/v1/operations/${op}`)).body.status === 'succeeded');
        expect((await after.get(`/v1/sites/${site.body.id}`)).status).toBe(404);
      } finally {
        await after.close();
      }
    } finally {
      await owned.db.close();
      await owned.drop();
    }
  }, 180_000);

  it('a web server that refuses or misses the site leaves it active with sync_state error, and the retried apply serves it', async () => {
    let refusing = true;
    const applied: string[] = [];
    const broken = await createTestApp({
      deps: {
        webDriver: {
          name: 'broken',
          applySite: async (spec) => {
            if (refusing) throw new Error('nginx -s reload failed: nginx is not running');
            applied.push(spec.id);
          },
          removeSite: async () => undefined,
        },
      },
    });
    try {
      const acc = await createAccount(broken, (await createPlan(broken)).id);
      await broken.post('/v1/domains', { account_id: acc.id, name: 'broken.com' });
      // Plain HTTP: an issued certificate would queue another apply and move sync_state under the assertions.
      const site = await broken.post('/v1/sites', { account_id: acc.id, hostname: 'broken.com', tls: { mode: 'none' } });
      const erred = await eventually(async () => {
        const r = await broken.get(`/v1/sites/${site.body.id}`);
        return r.body.status === 'active' && r.body.sync_state === 'error' ? r.body : null;
      });
      expect(erred.sync_error).toBe('nginx -s reload failed: nginx is not running');
      expect((await broken.get(`/v1/operations/${site.body.operation.id}`)).body.status).toBe('succeeded');
      const metrics = (await broken.get('/metrics')).text;
      expect(metrics).toContain('berth_sync_errors{unit="web"} 1');
      expect(metrics).toMatch(/berth_job_failures_total\{queue="web.apply"\} [1-9]/);
      refusing = false;
      await eventually(async () => (await broken.get(`/v1/sites/${site.body.id}`)).body.sync_state === 'in_sync', 60_000);
      expect(applied).toContain(site.body.id);
      expect((await broken.get('/metrics')).text).toContain('berth_sync_errors{unit="web"} 0');
    } finally {
      await broken.close();
    }
  }, 180_000);

  it('queued site operations can be canceled, and the site is put back', async () => {
    const idle = await createTestApp({ jobs: false });
    try {
      const acc = await createAccount(idle, (await createPlan(idle)).id);
      await idle.post('/v1/domains', { account_id: acc.id, name: 'cancel-me.com' });
      const site = await idle.post('/v1/sites', { account_id: acc.id, hostname: 'cancel-me.com' });
      const provision = await idle.post(`/v1/operations/${site.body.operation.id}/cancel`);
      expect(provision.body.status).toBe('canceled');
      const failed = (await idle.get(`/v1/sites/${site.body.id}`)).body;
      expect(failed).toMatchObject({ status: 'failed', error: { code: 'canceled' } });
      const del = await idle.request('DELETE', `/v1/sites/${site.body.id}`);
      expect(del.body.status).toBe('deleting');
      await idle.post(`/v1/operations/${del.body.operation.id}/cancel`);
      expect((await idle.get(`/v1/sites/${site.body.id}`)).body.status).toBe('failed');
    } finally {
      await idle.close();
    }
  });

  it('a domain is held by its sites (409 in_use); cascade deletes them', async () => {
    const site = await activeSite(w.accountA.id, ['www']);
    const held = await t.request('DELETE', `/v1/domains/${site.name}`);
    expect(held.status).toBe(409);
    expect(held.body.used_by).toEqual([{ type: 'site', id: site.id, hostname: site.name }]);
    expect((await t.request('DELETE', `/v1/domains/${site.name}?cascade=true`)).status).toBe(204);
    await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).status === 404);
  });
});
