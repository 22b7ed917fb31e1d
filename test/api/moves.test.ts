import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { listenAgents } from '../../src/app.js';
import { markStep } from '../../src/modules/moves/repo.js';
import { Relay } from '../../src/modules/servers/relay.js';
import { agentHarness } from '../helpers/agents.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccount, createPlan, world } from '../helpers/fixtures.js';

/**
 * Moves of accounts between servers (docs/Guides/servers.md, "Moving an account"), with two
 * agents in this process, each with its own data directory and embedded drivers: what the target
 * serves after the move, what the source keeps (nothing), the records, the hold on the account, a
 * cancel, and refused requests.
 */
let t: TestApp;
let url: string;
const LOCAL = 'srv_00000000000000000000000000';
const ROLES = ['web', 'mail', 'database'];
const agents = agentHarness(
  () => t,
  () => url,
);

beforeAll(async () => {
  t = await createTestApp({
    // Uploads of at most 1 MiB: a site holding more is still moved (its copy is Berth's own deployment).
    env: { BERTH_AGENT_LISTEN: '127.0.0.1:0', BERTH_WEB_IPV4: '192.0.2.10', BERTH_MOVE_TTL_S: '5', BERTH_DEPLOY_MAX_MB: '1' },
  });
  url = `https://127.0.0.1:${await listenAgents(t.app, t.config)}`;
});
// A spy on the relay ends with its test, passed or not.
afterEach(() => vi.restoreAllMocks());
afterAll(async () => {
  await agents.stopAgents();
  await t.close();
  agents.removeDirs();
});

/** A server with every role, enrolled, its agent running (`stop` stops it, `start` runs it again). */
const runningServer = (ipv4: string, ipv6?: string) => agents.runningServer({ ipv4, ...(ipv6 && { ipv6 }) });

async function ended(moveId: string, statuses = ['completed', 'failed', 'canceled']) {
  return eventually(async () => {
    const m = (await t.get(`/v1/moves/${moveId}`)).body;
    // The source forwards until the records' old TTLs have passed (an hour): here, that time is
    // over at once (moving the clock an hour on would outdate the agents' certificates).
    if (m.status === 'forwarding' && !statuses.includes('forwarding'))
      await t.db.query('UPDATE moves SET forward_until = $2 WHERE id = $1', [moveId, t.clock.now()]);
    return statuses.includes(m.status) ? m : null;
  });
}

/**
 * An account placed by `placement`, with a domain whose mail is on, a mailbox `info@` on it, and
 * a site whose deployment serves `index.html` (`content`), in sync.
 */
async function accountWithSite(placement: Record<string, string>, content: string) {
  const account = await createAccount(t, (await createPlan(t)).id, undefined, { placement });
  const name = `${account.username}.example.com`;
  expect((await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).status).toBe(201);
  const box = await t.post('/v1/emails', { address: `info@${name}`, password: 'a long enough passphrase', quota_mb: 10 });
  expect(box.status, box.text).toBe(201);
  const site = await t.post('/v1/sites', { account_id: account.id, hostname: name });
  await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
  const deployed = await t.request('POST', `/v1/sites/${site.body.id}/deployments`, {
    raw: tarGz([{ path: 'index.html', content }]),
    headers: { 'content-type': 'application/gzip' },
  });
  expect(deployed.status, deployed.text).toBe(202);
  await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.sync_state === 'in_sync');
  return { account, name, site: site.body as { id: string }, box: box.body as { id: string } };
}

/** The zone's records of `type` (A, or AAAA) as `name content ttl`, sorted. */
const addressRecords = async (name: string, type = 'A') =>
  ((await t.get(`/v1/domains/${name}/records?type=${type}`)).body.data as { name: string; content: string; ttl: number }[])
    .map((r) => `${r.name} ${r.content} ${r.ttl}`)
    .sort();

describe('moving an account', () => {
  it('carries its site (with what it wrote), its mail and its databases to the target; the records follow; the source keeps nothing', async () => {
    // The source has an IPv6 address, the target none.
    const a = await runningServer('127.0.0.21', '2001:db8::21');
    const b = await runningServer('127.0.0.22');
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, {
      placement: { web: a.server.id, mail: a.server.id, database: a.server.id },
    });
    const home = (dir: string) => path.join(dir, 'accounts', account.id);
    const name = `${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).status).toBe(201);
    const site = await t.post('/v1/sites', { account_id: account.id, hostname: name });
    expect(site.status, site.text).toBe(202);
    const box = await t.post('/v1/emails', { address: `info@${name}`, password: 'a long enough passphrase', quota_mb: 10 });
    expect(box.status, box.text).toBe(201);
    expect((await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_shop` })).status).toBe(201);
    await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
    const deployed = await t.request('POST', `/v1/sites/${site.body.id}/deployments`, {
      raw: tarGz([{ path: 'index.html', content: 'served' }]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deployed.status, deployed.text).toBe(202);
    const siteFiles = (dir: string) => path.join(home(dir), 'sites', site.body.id, 'current');
    await eventually(async () => existsSync(path.join(siteFiles(a.dataDir), 'index.html')));
    await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.sync_state === 'in_sync');
    // What the site wrote on its server, and a message delivered there.
    writeFileSync(path.join(siteFiles(a.dataDir), 'upload.txt'), 'written on a');
    writeFileSync(path.join(siteFiles(a.dataDir), 'old.txt'), 'deleted on a before the freeze');
    writeFileSync(path.join(siteFiles(a.dataDir), 'same-size.txt'), 'AAAA');
    // A name that an object's key cannot hold (it would set the object's prototype).
    writeFileSync(path.join(siteFiles(a.dataDir), '__proto__'), 'first');
    writeFileSync(path.join(siteFiles(a.dataDir), 'large.bin'), randomBytes(2 * 2 ** 20));
    const maildir = (dir: string) => path.join(home(dir), 'mail', name, box.body.id, 'Maildir');
    await eventually(async () => existsSync(maildir(a.dataDir)));
    writeFileSync(path.join(maildir(a.dataDir), 'new', '1700000000.M1P1.mx'), 'Subject: kept\r\n\r\nhello\r\n');
    expect(await addressRecords(name)).toEqual(['@ 127.0.0.21 3600', 'mail 127.0.0.21 3600', 'www 127.0.0.21 3600']);
    expect(await addressRecords(name, 'AAAA')).toEqual([
      '@ 2001:db8::21 3600',
      'mail 2001:db8::21 3600',
      'www 2001:db8::21 3600',
    ]);
    const backup = await t.post('/v1/backups', { account_id: account.id, include: ['dns'] });
    expect(backup.status, backup.text).toBe(202);
    await eventually(async () => (await t.get(`/v1/backups/${backup.body.id}`)).body.status === 'completed');

    const relayed = vi.spyOn(Relay.prototype, 'take');
    const moved = await t.post(`/v1/accounts/${account.id}/move`, {
      to: { web: b.server.id, mail: b.server.id, database: b.server.id },
      cutover: 'manual',
    });
    expect(moved.status, moved.text).toBe(202);
    expect(moved.body).toMatchObject({
      account_id: account.id,
      status: 'queued',
      cutover: 'manual',
      operation: { type: 'account.move' },
    });
    expect(moved.body.from).toEqual({ web: a.server.id, mail: a.server.id, database: a.server.id });

    // Ready: served by the source, unfrozen, the records' TTL lowered; the account is held.
    const ready = await ended(moved.body.id, ['ready', 'failed']);
    expect(ready.status, JSON.stringify(ready.error)).toBe('ready');
    expect(await addressRecords(name)).toEqual(['@ 127.0.0.21 5', 'mail 127.0.0.21 5', 'www 127.0.0.21 5']);
    expect(await addressRecords(name, 'AAAA')).toEqual(['@ 2001:db8::21 5', 'mail 2001:db8::21 5', 'www 2001:db8::21 5']);
    // Copied while the source serves: the site's files and the messages are here already.
    const staged = path.join(t.dataDir, 'staging', `move-${moved.body.id}`);
    expect(readFileSync(path.join(staged, 'sites', site.body.id, 'upload.txt'), 'utf8')).toBe('written on a');
    expect(existsSync(path.join(staged, 'mail', name, box.body.id, 'Maildir', 'new', '1700000000.M1P1.mx'))).toBe(true);
    // The site's files are sent on to the target already, as the release they will go live as
    // there (nothing of the account is served there yet).
    const ahead = path.join(home(b.dataDir), 'sites', site.body.id, '.staged');
    const [sentAs] = readdirSync(ahead);
    expect(readFileSync(path.join(ahead, sentAs as string, 'upload.txt'), 'utf8')).toBe('written on a');
    // So are the messages, beside the mail domains it will serve there.
    const mailAhead = path.join(home(b.dataDir), 'mail', '.staged', name, box.body.id, 'Maildir', 'new');
    expect(readdirSync(mailAhead)).toEqual(['1700000000.M1P1.mx']);
    // Both went on as they came from the source, in one pass through the control plane, and so
    // did the database's dump, loaded on the target as it came.
    expect(relayed.mock.results.filter((r) => r.value !== undefined)).toHaveLength(3);
    expect(existsSync(path.join(staged, 'databases', `${account.username}_shop.loaded`))).toBe(true);
    // A target that no longer holds it (swept, its disk replaced) is sent it whole at the final copy.
    rmSync(path.join(home(b.dataDir), 'mail', '.staged'), { recursive: true });
    // What changes until the freeze comes with the final copy; what is deleted is deleted there too.
    writeFileSync(path.join(siteFiles(a.dataDir), 'upload.txt'), 'rewritten on a');
    writeFileSync(path.join(siteFiles(a.dataDir), 'late.txt'), 'written while ready');
    // Two of the same size, compared by their hashes: one rewritten otherwise, one only touched.
    writeFileSync(path.join(siteFiles(a.dataDir), 'same-size.txt'), 'BBBB');
    writeFileSync(path.join(siteFiles(a.dataDir), '__proto__'), 'rewritten');
    const touched = new Date(Date.now() + 60_000);
    utimesSync(path.join(siteFiles(a.dataDir), 'index.html'), touched, touched);
    rmSync(path.join(siteFiles(a.dataDir), 'old.txt'));
    writeFileSync(path.join(maildir(a.dataDir), 'new', '1700000001.M2P1.mx'), 'Subject: late\r\n\r\nhello\r\n');
    for (const held of [
      await t.post('/v1/backups', { account_id: account.id }),
      await t.request('POST', `/v1/sites/${site.body.id}/deployments`, {
        raw: tarGz([{ path: 'index.html', content: 'not now' }]),
        headers: { 'content-type': 'application/gzip' },
      }),
      await t.request('DELETE', `/v1/accounts/${account.id}`),
      await t.post(`/v1/accounts/${account.id}/move`, { to: { web: a.server.id } }),
      await t.post(`/v1/backups/${backup.body.id}/restore`, {}),
    ]) {
      expect(held.status, held.text).toBe(409);
      expect(held.body).toMatchObject({ code: 'account_moving', move_id: moved.body.id });
    }
    // Other writes go on; a record's lowered TTL (below the 60 s a request may set) stays as it is.
    expect((await t.patch(`/v1/emails/${box.body.id}`, { quota_mb: 20 })).status).toBe(200);
    const www = (await t.get(`/v1/domains/${name}/records?type=A&name=www`)).body.data[0];
    const edited = await t.patch(`/v1/domains/${name}/records/${www.id}`, { content: '127.0.0.21' });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body.ttl).toBe(5);
    expect((await t.patch(`/v1/domains/${name}/records/${www.id}`, { ttl: 5 })).status).toBe(422);
    // A sync that sends the records back as a GET showed them keeps the lowered TTLs; a TTL that
    // low on any other record is refused.
    const shown = (await t.get(`/v1/domains/${name}/records?limit=200`)).body.data.filter(
      (r: { managed: boolean }) => !r.managed,
    );
    const synced = await t.request('PUT', `/v1/domains/${name}/records`, {
      body: {
        records: shown.map(({ name: n, type, ttl, content }: Record<string, unknown>) => ({ name: n, type, ttl, content })),
      },
      headers: { 'if-match': `"${(await t.get(`/v1/domains/${name}`)).body.version}"` },
    });
    expect(synced.status, synced.text).toBe(200);
    expect(await addressRecords(name)).toEqual(['@ 127.0.0.21 5', 'mail 127.0.0.21 5', 'www 127.0.0.21 5']);
    const lowered = await t.request('PUT', `/v1/domains/${name}/records`, {
      body: {
        records: [
          ...shown.map(({ name: n, type, ttl, content }: Record<string, unknown>) => ({ name: n, type, ttl, content })),
          { name: 'new', type: 'A', ttl: 5, content: '192.0.2.1' },
        ],
      },
      headers: { 'if-match': `"${(await t.get(`/v1/domains/${name}`)).body.version}"` },
    });
    expect(lowered.status).toBe(422);
    expect(lowered.body.errors).toEqual([
      expect.objectContaining({ pointer: `/records/${shown.length}/ttl`, code: 'out_of_range' }),
    ]);

    // The target cannot serve the site yet (its server block cannot be written).
    const block = (dir: string) => path.join(dir, 'rendered', 'web', 'sites', `${site.body.id}.conf`);
    mkdirSync(block(b.dataDir), { recursive: true });
    const cut = await t.post(`/v1/moves/${moved.body.id}/cutover`, {});
    expect(cut.status, cut.text).toBe(200);
    // Landed, the account stays frozen until the target serves what was landed.
    const stepOf = async (name: string) =>
      (await t.get(`/v1/moves/${moved.body.id}`)).body.steps.find((s: { name: string }) => s.name === name).state;
    await eventually(async () => (await stepOf('land')) === 'done');
    await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.sync_state === 'error');
    expect(await stepOf('thaw')).not.toBe('done');
    expect((await t.get(`/v1/moves/${moved.body.id}`)).body.status).toBe('cutting_over');
    rmSync(block(b.dataDir), { recursive: true });

    // Forwarding: the target is in charge and the records name it; the source proxies the site and
    // relays the mail to it until the records' old TTL (3600 s) has passed since their lowering.
    const forwarding = await ended(moved.body.id, ['forwarding', 'failed']);
    expect(forwarding.status, JSON.stringify(forwarding.error)).toBe('forwarding');
    // Thawed, the target holds the site's files: the copy sent ahead, which went live at the cutover.
    expect(readFileSync(path.join(siteFiles(b.dataDir), 'upload.txt'), 'utf8')).toBe('rewritten on a');
    expect((await t.get(`/v1/sites/${site.body.id}`)).body.current_deployment_id).toBe(sentAs);
    expect(existsSync(path.join(ahead, sentAs as string))).toBe(false);
    const loweredAt = forwarding.steps.find((s: { name: string }) => s.name === 'lower_ttl').ended_at;
    expect(Date.parse(forwarding.forward_until) - Date.parse(loweredAt)).toBe(3600_000);
    expect(await addressRecords(name)).toEqual(['@ 127.0.0.22 5', 'mail 127.0.0.22 5', 'www 127.0.0.22 5']);
    // The target has no IPv6 address: no record sends IPv6 clients to the source any more.
    expect(await addressRecords(name, 'AAAA')).toEqual([]);
    await eventually(async () =>
      readFileSync(block(a.dataDir), 'utf8').includes('proxy_pass $scheme://127.0.0.22:$server_port;'),
    );
    const mailMap = (dir: string, map: string) => readFileSync(path.join(dir, 'rendered', 'mail', map), 'utf8');
    await eventually(async () => mailMap(a.dataDir, 'transport') === `${name} smtp:[127.0.0.22]:25\n`);
    expect(mailMap(a.dataDir, 'recipient_access')).toBe('');
    expect(mailMap(a.dataDir, 'passwd')).toContain(`info@${name}`);
    // Restarted, the source's agent forwards again from what it kept, before it reaches the control plane.
    await a.stop();
    rmSync(block(a.dataDir));
    a.start();
    await eventually(async () => existsSync(block(a.dataDir)) && readFileSync(block(a.dataDir), 'utf8').includes('proxy_pass'));

    const done = await ended(moved.body.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.steps.map((s: { state: string }) => s.state)).toEqual(Array(done.steps.length).fill('done'));
    // Every step's times in RFC 3339, as the API writes times (the forwarding's end too, which a query sets).
    const times = done.steps.flatMap((s: { started_at: string; ended_at: string }) => [s.started_at, s.ended_at]);
    expect(times.filter((at: string) => new Date(at).toISOString() !== at)).toEqual([]);
    expect(done.bytes_total).toBeGreaterThan(0);
    expect(done.cut_over_at).not.toBeNull();
    expect(done.frozen_at).not.toBeNull();
    expect((await t.get(`/v1/operations/${moved.body.operation.id}`)).body.status).toBe('succeeded');
    expect(
      (await t.get(`/v1/moves?account_id=${account.id}&status=completed`)).body.data.map((m: { id: string }) => m.id),
    ).toEqual([moved.body.id]);

    // On the target: placed there, the records point there with their TTL back, its data there.
    expect((await t.get(`/v1/accounts/${account.id}`)).body.placement).toEqual({
      web: b.server.id,
      mail: b.server.id,
      database: b.server.id,
    });
    expect(await addressRecords(name)).toEqual(['@ 127.0.0.22 3600', 'mail 127.0.0.22 3600', 'www 127.0.0.22 3600']);
    await eventually(async () => existsSync(path.join(siteFiles(b.dataDir), 'upload.txt')));
    expect(readFileSync(path.join(siteFiles(b.dataDir), 'index.html'), 'utf8')).toBe('served');
    expect(readFileSync(path.join(siteFiles(b.dataDir), 'upload.txt'), 'utf8')).toBe('rewritten on a');
    expect(readFileSync(path.join(siteFiles(b.dataDir), 'late.txt'), 'utf8')).toBe('written while ready');
    expect(readFileSync(path.join(siteFiles(b.dataDir), 'same-size.txt'), 'utf8')).toBe('BBBB');
    expect(readFileSync(path.join(siteFiles(b.dataDir), '__proto__'), 'utf8')).toBe('rewritten');
    expect(statSync(path.join(siteFiles(b.dataDir), 'large.bin')).size).toBe(2 * 2 ** 20);
    expect(readFileSync(path.join(siteFiles(b.dataDir), 'index.html'), 'utf8')).toBe('served');
    expect(existsSync(path.join(siteFiles(b.dataDir), 'old.txt'))).toBe(false);
    await eventually(async () => existsSync(path.join(maildir(b.dataDir), 'new', '1700000000.M1P1.mx')));
    expect(existsSync(path.join(maildir(b.dataDir), 'new', '1700000001.M2P1.mx'))).toBe(true);
    // Put in place from what was sent ahead (the land sends the messages only when that is gone).
    expect(existsSync(path.join(home(b.dataDir), 'mail', '.staged'))).toBe(false);
    await eventually(async () =>
      readFileSync(path.join(b.dataDir, 'rendered', 'mail', 'passwd'), 'utf8').includes(`info@${name}`),
    );
    expect(readFileSync(path.join(b.dataDir, 'rendered', 'mail', 'passwd'), 'utf8')).toContain('userdb_quota_rule=*:storage=20M');
    await eventually(async () => existsSync(path.join(b.dataDir, 'rendered', 'db', `${account.username}.sql`)));
    await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.sync_state === 'in_sync');
    expect(readFileSync(block(b.dataDir), 'utf8')).not.toContain('return 503');

    // The source holds nothing of it.
    await eventually(async () => !existsSync(home(a.dataDir)) && !existsSync(block(a.dataDir)));
    expect(mailMap(a.dataDir, 'passwd')).not.toContain(`@${name}`);
    expect(mailMap(a.dataDir, 'transport')).toBe('');
    expect(existsSync(path.join(a.dataDir, 'rendered', 'db', `${account.username}.sql`))).toBe(false);
    expect(existsSync(staged)).toBe(false);
    expect(existsSync(`${staged}.listings`)).toBe(false);

    // Its events, and the account free again.
    const events = (await t.get(`/v1/events?resource_id=${moved.body.id}`)).body.data.map((e: { type: string }) => e.type);
    expect(events.sort()).toEqual(
      ['account.move.completed', 'account.move.cut_over', 'account.move.ready', 'account.move.started'].sort(),
    );
    expect((await t.post('/v1/backups', { account_id: account.id })).status).toBe(202);
  });

  it('sends the copy whole after its first pass when the target did not take it as it came from the source', async () => {
    const a = await runningServer('127.0.0.23');
    const b = await runningServer('127.0.0.24');
    const account = await createAccount(t, (await createPlan(t)).id, undefined, {
      placement: { web: a.server.id, mail: a.server.id, database: a.server.id },
    });
    const name = `${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    const site = await t.post('/v1/sites', { account_id: account.id, hostname: name });
    await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
    const deployed = await t.request('POST', `/v1/sites/${site.body.id}/deployments`, {
      raw: tarGz([{ path: 'index.html', content: 'relayed or not' }]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deployed.status, deployed.text).toBe(202);
    await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.sync_state === 'in_sync');
    // The target's request for the relayed bytes finds none (as a retried one would).
    const relayed = vi.spyOn(Relay.prototype, 'take').mockReturnValueOnce(undefined);
    const moved = await t.post(`/v1/accounts/${account.id}/move`, { to: { web: b.server.id } });
    expect(moved.status, moved.text).toBe(202);
    const done = await ended(moved.body.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(relayed).toHaveBeenCalledTimes(1);
    const files = path.join(b.dataDir, 'accounts', account.id, 'sites', site.body.id, 'current');
    expect(readFileSync(path.join(files, 'index.html'), 'utf8')).toBe('relayed or not');
  });

  it('from the local server: what the control plane served itself goes to the target, and it serves none of it any more', async () => {
    const b = await runningServer('127.0.0.27');
    const account = await createAccount(t, (await createPlan(t)).id);
    expect(account.placement).toEqual({ web: LOCAL, mail: LOCAL, database: LOCAL });
    const name = `${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).status).toBe(201);
    const site = await t.post('/v1/sites', { account_id: account.id, hostname: name });
    const box = await t.post('/v1/emails', { address: `info@${name}`, password: 'a long enough passphrase', quota_mb: 10 });
    expect((await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_shop` })).status).toBe(201);
    await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
    const deployed = await t.request('POST', `/v1/sites/${site.body.id}/deployments`, {
      raw: tarGz([{ path: 'index.html', content: 'served here' }]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deployed.status, deployed.text).toBe(202);
    const here = {
      block: path.join(t.dataDir, 'rendered', 'web', 'sites', `${site.body.id}.conf`),
      passwd: path.join(t.dataDir, 'rendered', 'mail', 'passwd'),
      sql: path.join(t.dataDir, 'rendered', 'db', `${account.username}.sql`),
      maildir: path.join(t.dataDir, 'accounts', account.id, 'mail', name, box.body.id, 'Maildir'),
    };
    await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.current_deployment_id === deployed.body.id);
    await eventually(async () => existsSync(here.maildir) && existsSync(here.sql) && existsSync(here.block));
    writeFileSync(path.join(here.maildir, 'new', '1700000000.M1P1.here'), 'Subject: kept\r\n\r\nhello\r\n');
    expect(await addressRecords(name)).toEqual(['@ 192.0.2.10 3600', 'mail 192.0.2.10 3600', 'www 192.0.2.10 3600']);

    const moved = await t.post(`/v1/accounts/${account.id}/move`, {
      to: { web: b.server.id, mail: b.server.id, database: b.server.id },
    });
    expect(moved.status, moved.text).toBe(202);
    expect(moved.body.from).toEqual({ web: LOCAL, mail: LOCAL, database: LOCAL });
    // While it forwards, the control plane's own web and mail servers proxy and relay to the target.
    expect((await ended(moved.body.id, ['forwarding', 'failed'])).status).toBe('forwarding');
    const transport = path.join(t.dataDir, 'rendered', 'mail', 'transport');
    expect(readFileSync(here.block, 'utf8')).toContain('proxy_pass $scheme://127.0.0.27:$server_port;');
    expect(readFileSync(transport, 'utf8')).toBe(`${name} smtp:[127.0.0.27]:25\n`);
    // The target renumbered meanwhile: the forwarding follows it, as the records do, and the
    // step keeps the time it first started.
    const forwardStep = async () =>
      ((await t.get(`/v1/moves/${moved.body.id}`)).body.steps as { name: string; started_at: string }[]).find(
        (s) => s.name === 'forward',
      );
    const forwarding = await forwardStep();
    t.clock.advance(1000);
    const renumbered = await t.request('PATCH', `/v1/servers/${b.server.id}`, {
      body: { ipv4: '127.0.0.28' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(renumbered.status, renumbered.text).toBe(200);
    await eventually(async () => readFileSync(here.block, 'utf8').includes('proxy_pass $scheme://127.0.0.28:$server_port;'));
    await eventually(async () => readFileSync(transport, 'utf8') === `${name} smtp:[127.0.0.28]:25\n`);
    await eventually(async () => (await addressRecords(name)).every((r) => r.includes(' 127.0.0.28 ')));
    expect((await t.get(`/v1/moves/${moved.body.id}`)).body.status).toBe('forwarding');
    expect(await forwardStep()).toEqual(forwarding);
    const done = await ended(moved.body.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');

    const there = path.join(b.dataDir, 'accounts', account.id);
    await eventually(async () => existsSync(path.join(there, 'sites', site.body.id, 'current', 'index.html')));
    expect(readFileSync(path.join(there, 'sites', site.body.id, 'current', 'index.html'), 'utf8')).toBe('served here');
    await eventually(async () =>
      existsSync(path.join(there, 'mail', name, box.body.id, 'Maildir', 'new', '1700000000.M1P1.here')),
    );
    await eventually(async () => existsSync(path.join(b.dataDir, 'rendered', 'db', `${account.username}.sql`)));
    expect(await addressRecords(name)).toEqual(['@ 127.0.0.28 3600', 'mail 127.0.0.28 3600', 'www 127.0.0.28 3600']);
    // Nothing of it is served here any more.
    expect(existsSync(here.block)).toBe(false);
    expect(readFileSync(here.passwd, 'utf8')).not.toContain(`@${name}`);
    expect(readFileSync(transport, 'utf8')).toBe('');
    expect(existsSync(here.sql)).toBe(false);
    expect(existsSync(path.join(t.dataDir, 'accounts', account.id))).toBe(false);
  });

  it('makes its final copy only once the source serves the account frozen: with its agent away, the move waits in its freeze', async () => {
    // The target has an IPv6 address, the source none.
    const a = await runningServer('127.0.0.29');
    const b = await runningServer('127.0.0.30', '2001:db8::30');
    const account = await createAccount(t, (await createPlan(t)).id, undefined, {
      placement: { web: a.server.id, mail: a.server.id, database: LOCAL },
    });
    const name = `${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    const site = await t.post('/v1/sites', { account_id: account.id, hostname: name });
    await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
    const moved = await t.post(`/v1/accounts/${account.id}/move`, { to: { web: b.server.id }, cutover: 'manual' });
    expect((await ended(moved.body.id, ['ready', 'failed'])).status).toBe('ready');

    await a.stop();
    expect((await t.post(`/v1/moves/${moved.body.id}/cutover`, {})).status).toBe(200);
    const freezing = await eventually(async () => {
      const m = (await t.get(`/v1/moves/${moved.body.id}`)).body;
      return m.status === 'freezing' ? m : null;
    });
    const state = (m: { steps: { name: string; state: string }[] }, name: string) => m.steps.find((s) => s.name === name)?.state;
    expect(state(freezing, 'copy')).toBe('done');
    expect(state(freezing, 'freeze')).toBe('running');
    expect(state(freezing, 'final_copy')).toBe('pending');
    const block = path.join(a.dataDir, 'rendered', 'web', 'sites', `${site.body.id}.conf`);
    expect(readFileSync(block, 'utf8')).not.toContain('Retry-After');
    // Meanwhile another account's move runs to its end beside it (BERTH_MOVE_CONCURRENCY, 2).
    const [c, d] = [await runningServer('127.0.0.47'), await runningServer('127.0.0.48')];
    const other = await createAccount(t, (await createPlan(t)).id, undefined, {
      placement: { web: c.server.id, mail: c.server.id, database: LOCAL },
    });
    const beside = await t.post(`/v1/accounts/${other.id}/move`, { to: { web: d.server.id } });
    expect(beside.status, beside.text).toBe(202);
    expect((await ended(beside.body.id)).status).toBe('completed');
    expect((await t.get(`/v1/moves/${moved.body.id}`)).body.status).toBe('freezing');

    // Back: it serves the account frozen (503, Retry-After), then the move goes on to its end.
    a.start();
    const done = await ended(moved.body.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    // The template's names served by the source gain the target's IPv6 address, at their own TTL.
    expect(await addressRecords(name)).toEqual(['@ 127.0.0.30 3600', 'www 127.0.0.30 3600']);
    expect(await addressRecords(name, 'AAAA')).toEqual(['@ 2001:db8::30 3600', 'www 2001:db8::30 3600']);
    // The source's agent withdraws the account once handed the withdrawal (the cleanup).
    await eventually(async () => !existsSync(block));
  });

  it('past its cutover, is tried again until it completes, however often it fails: more often than the queue retries a job', async () => {
    const a = await runningServer('127.0.0.45');
    const b = await runningServer('127.0.0.46');
    const account = await createAccount(t, (await createPlan(t)).id, undefined, {
      placement: { web: a.server.id, mail: a.server.id, database: LOCAL },
    });
    const name = `${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    // The land's records, pointed at the target, fail seven times (the queue gives a job six runs).
    await t.db.exec(`
      CREATE SEQUENCE land_failures;
      CREATE FUNCTION fail_land() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.content = '127.0.0.46' AND nextval('land_failures') <= 7 THEN RAISE EXCEPTION 'the records cannot change now'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER fail_land BEFORE UPDATE ON dns_records FOR EACH ROW EXECUTE FUNCTION fail_land();`);
    try {
      const moved = await t.post(`/v1/accounts/${account.id}/move`, { to: { web: b.server.id } });
      expect(moved.status, moved.text).toBe(202);
      const retrying = await eventually(async () => {
        const m = (await t.get(`/v1/moves/${moved.body.id}`)).body;
        return m.error?.code === 'move_retrying' ? m : null;
      });
      expect(retrying.cut_over_at).not.toBeNull();
      const done = await ended(moved.body.id);
      expect(done.status, JSON.stringify(done.error)).toBe('completed');
      const failures = await t.db.query<{ n: number }>('SELECT last_value::int AS n FROM land_failures');
      expect(failures.rows[0]?.n).toBeGreaterThan(7);
      expect(await addressRecords(name)).toEqual(['@ 127.0.0.46 3600', 'www 127.0.0.46 3600']);
    } finally {
      await t.db.exec('DROP TRIGGER fail_land ON dns_records; DROP FUNCTION fail_land(); DROP SEQUENCE land_failures;');
    }
  });

  it('from a backup, when the source is away: the backup’s files and messages go to the target, the source is withdrawn once back', async () => {
    const a = await runningServer('127.0.0.33');
    const b = await runningServer('127.0.0.34');
    const { account, name, site, box } = await accountWithSite(
      { web: a.server.id, mail: a.server.id, database: LOCAL },
      'backed up',
    );
    const home = (dir: string) => path.join(dir, 'accounts', account.id);
    const current = (dir: string) => path.join(home(dir), 'sites', site.id, 'current');
    const maildir = (dir: string) => path.join(home(dir), 'mail', name, box.id, 'Maildir');
    await eventually(async () => existsSync(path.join(current(a.dataDir), 'index.html')) && existsSync(maildir(a.dataDir)));
    writeFileSync(path.join(maildir(a.dataDir), 'new', '1700000000.M1P1.a'), 'Subject: kept\r\n\r\nhello\r\n');
    const backup = await t.post('/v1/backups', { account_id: account.id, include: ['sites', 'emails'] });
    expect(backup.status, backup.text).toBe(202);
    await eventually(async () => (await t.get(`/v1/backups/${backup.body.id}`)).body.status === 'completed');
    writeFileSync(path.join(current(a.dataDir), 'after.txt'), 'written after the backup');

    await a.stop();
    const other = await createAccount(t, (await createPlan(t)).id);
    const foreign = await t.post('/v1/backups', { account_id: other.id, include: ['dns'] });
    for (const from_backup of [foreign.body.id, 'bak_01kb0000000000000000000000']) {
      const r = await t.post(`/v1/accounts/${account.id}/move`, { to: { web: b.server.id, mail: b.server.id }, from_backup });
      expect(r.status, r.text).toBe(422);
      expect(r.body.errors).toContainEqual(expect.objectContaining({ pointer: '/from_backup', code: 'unknown_backup' }));
    }
    const moved = await t.post(`/v1/accounts/${account.id}/move`, {
      to: { web: b.server.id, mail: b.server.id },
      from_backup: backup.body.id,
    });
    expect(moved.status, moved.text).toBe(202);
    expect(moved.body.from_backup).toBe(backup.body.id);
    const done = await ended(moved.body.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    await eventually(async () => existsSync(path.join(current(b.dataDir), 'index.html')));
    expect(readFileSync(path.join(current(b.dataDir), 'index.html'), 'utf8')).toBe('backed up');
    expect(existsSync(path.join(current(b.dataDir), 'after.txt'))).toBe(false);
    await eventually(async () => existsSync(path.join(maildir(b.dataDir), 'new', '1700000000.M1P1.a')));

    // Back, the source gives up what it held.
    a.start();
    await eventually(async () => !existsSync(home(a.dataDir)));
  });

  it('of its web role alone, from a backup: its mail stays where it is, as it is, with what came after the backup', async () => {
    const a = await runningServer('127.0.0.35');
    const b = await runningServer('127.0.0.36');
    const { account, name, site, box } = await accountWithSite({ web: a.server.id, mail: LOCAL, database: LOCAL }, 'backed up');
    const current = (dir: string) => path.join(dir, 'accounts', account.id, 'sites', site.id, 'current');
    const maildir = path.join(t.config.dataDir, 'accounts', account.id, 'mail', name, box.id, 'Maildir');
    await eventually(async () => existsSync(path.join(current(a.dataDir), 'index.html')) && existsSync(maildir));
    writeFileSync(path.join(maildir, 'new', '1700000000.M1P1.mx'), 'Subject: backed up\r\n\r\nhello\r\n');
    const backup = await t.post('/v1/backups', { account_id: account.id, include: ['sites', 'emails'] });
    expect(backup.status, backup.text).toBe(202);
    await eventually(async () => (await t.get(`/v1/backups/${backup.body.id}`)).body.status === 'completed');
    // Delivered after the backup, on the mail server that stays.
    writeFileSync(path.join(maildir, 'new', '1700000001.M1P1.mx'), 'Subject: later\r\n\r\nhello\r\n');
    const kept = statSync(path.join(maildir, 'new', '1700000000.M1P1.mx')).ino;

    await a.stop();
    const moved = await t.post(`/v1/accounts/${account.id}/move`, { to: { web: b.server.id }, from_backup: backup.body.id });
    expect(moved.status, moved.text).toBe(202);
    const done = await ended(moved.body.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    await eventually(async () => existsSync(path.join(current(b.dataDir), 'index.html')));
    expect((await t.get(`/v1/accounts/${account.id}`)).body.placement).toEqual({
      web: b.server.id,
      mail: LOCAL,
      database: LOCAL,
    });
    // The mailbox was neither put back from the backup nor copied: the same files, the later one too.
    expect(readdirSync(path.join(maildir, 'new')).sort()).toEqual(['1700000000.M1P1.mx', '1700000001.M1P1.mx']);
    expect(statSync(path.join(maildir, 'new', '1700000000.M1P1.mx')).ino).toBe(kept);
    a.start();
  });

  it('canceled before its cutover, leaves the account where it was, as it was, and nothing on the target', async () => {
    const a = await runningServer('127.0.0.23');
    const b = await runningServer('127.0.0.24');
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, {
      placement: { web: a.server.id, mail: a.server.id, database: LOCAL },
    });
    const name = `${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).status).toBe(201);
    const box = await t.post('/v1/emails', { address: `info@${name}`, password: 'a long enough passphrase' });
    const maildir = path.join(a.dataDir, 'accounts', account.id, 'mail', name, box.body.id, 'Maildir');
    await eventually(async () => existsSync(maildir));
    writeFileSync(path.join(maildir, 'new', '1700000000.M1P1.mx'), 'Subject: kept\r\n\r\nhello\r\n');
    const to = { web: b.server.id, mail: b.server.id };
    const moved = await t.post(`/v1/accounts/${account.id}/move`, { to, cutover: 'manual' });
    expect(moved.status, moved.text).toBe(202);
    expect(moved.body.from).toEqual({ web: a.server.id, mail: a.server.id });
    expect((await ended(moved.body.id, ['ready', 'failed'])).status).toBe('ready');
    expect(await addressRecords(name)).toEqual(['@ 127.0.0.23 5', 'mail 127.0.0.23 5', 'www 127.0.0.23 5']);
    // The messages were sent ahead.
    expect(existsSync(path.join(b.dataDir, 'accounts', account.id, 'mail', '.staged', name, box.body.id))).toBe(true);

    const canceled = await t.post(`/v1/moves/${moved.body.id}/cancel`, {});
    expect(canceled.status, canceled.text).toBe(200);
    const done = await ended(moved.body.id);
    expect(done.status).toBe('canceled');
    expect(done.error).toBeNull();
    expect((await t.get(`/v1/operations/${moved.body.operation.id}`)).body.status).toBe('canceled');
    expect((await t.get(`/v1/accounts/${account.id}`)).body.placement.web).toBe(a.server.id);
    expect(await addressRecords(name)).toEqual(['@ 127.0.0.23 3600', 'mail 127.0.0.23 3600', 'www 127.0.0.23 3600']);
    expect(existsSync(path.join(b.dataDir, 'accounts', account.id))).toBe(false);
    expect(readdirSync(path.join(maildir, 'new'))).toEqual(['1700000000.M1P1.mx']);
    // The provider's: a reseller does not see it.
    expect((await t.get(`/v1/moves/${moved.body.id}`, (await world(t)).tokenA)).status).toBe(404);
    // Over: neither canceled again nor cut over; the account is free.
    expect((await t.post(`/v1/moves/${moved.body.id}/cancel`, {})).status).toBe(409);
    expect((await t.post(`/v1/moves/${moved.body.id}/cutover`, {})).status).toBe(409);
    expect((await t.post('/v1/backups', { account_id: account.id })).status).toBe(202);
  });

  it('canceled while its run waits for its source, rolls back once, after that run: the cancel’s run waits in another worker', async () => {
    const a = await runningServer('127.0.0.49');
    const b = await runningServer('127.0.0.50');
    const { account } = await accountWithSite({ web: a.server.id, mail: a.server.id, database: LOCAL }, 'stays');
    const moved = await t.post(`/v1/accounts/${account.id}/move`, { to: { web: b.server.id }, cutover: 'manual' });
    expect((await ended(moved.body.id, ['ready', 'failed'])).status).toBe('ready');
    await a.stop();
    expect((await t.post(`/v1/moves/${moved.body.id}/cutover`, {})).status).toBe(200);
    const status = async () => (await t.get(`/v1/moves/${moved.body.id}`)).body.status;
    await eventually(async () => (await status()) === 'freezing');
    expect((await t.post(`/v1/moves/${moved.body.id}/cancel`, {})).status).toBe(200);
    const active = async () =>
      (
        await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'account.move' AND state = 'active'`,
        )
      ).rows[0]?.n;
    await eventually(async () => {
      expect(await status()).toBe('freezing');
      return (await active()) === 2;
    });
    a.start();
    expect((await ended(moved.body.id)).status).toBe('canceled');
    await eventually(async () => (await active()) === 0);
    const events = await t.get(`/v1/events?resource_id=${moved.body.id}&type=account.move.canceled`);
    expect(events.body.data).toHaveLength(1);
    expect((await t.get(`/v1/accounts/${account.id}`)).body.placement.web).toBe(a.server.id);
  });

  it('copied again after a crash, drops first what the earlier copy sent ahead: a second copy that fails leaves nothing on the target', async () => {
    const a = await runningServer('127.0.0.25');
    const b = await runningServer('127.0.0.26');
    const { account, site } = await accountWithSite({ web: a.server.id, mail: a.server.id, database: LOCAL }, 'sent ahead');
    const moved = await t.post(`/v1/accounts/${account.id}/move`, {
      to: { web: b.server.id, mail: b.server.id },
      cutover: 'manual',
    });
    expect((await ended(moved.body.id, ['ready', 'failed'])).status).toBe('ready');
    const onTarget = path.join(b.dataDir, 'accounts', account.id);
    expect(existsSync(path.join(onTarget, 'mail', '.staged'))).toBe(true);
    expect(existsSync(path.join(onTarget, 'sites', site.id))).toBe(true);

    // As a control plane killed while it copied leaves the move: the step running, the first
    // copy's listings in place. Its second run fails: the source is away.
    await markStep(t.db, moved.body.id, 'copy', 'running', t.clock.now());
    await a.stop();
    await t.db.query('UPDATE servers SET last_seen_at = $2 WHERE id = $1', [a.server.id, new Date(0)]);
    expect((await t.post(`/v1/moves/${moved.body.id}/cutover`, {})).status).toBe(200);
    const done = await ended(moved.body.id);
    expect(done.status).toBe('failed');
    expect(existsSync(onTarget)).toBe(false);
    expect((await t.get(`/v1/accounts/${account.id}`)).body.placement.web).toBe(a.server.id);
  });

  it('drained, a server has its accounts moved off it, two at a time at most, takes no new one, and is decommissioned once empty', async () => {
    const a = await runningServer('127.0.0.28');
    const plan = await createPlan(t);
    const placed = [];
    for (let i = 0; i < 3; i++)
      placed.push(
        await createAccount(t, plan.id, undefined, { placement: { web: a.server.id, mail: a.server.id, database: LOCAL } }),
      );
    const drained = await t.post(`/v1/servers/${a.server.id}/drain`, {});
    expect(drained.status, drained.text).toBe(200);
    expect(drained.body.status).toBe('draining');
    expect(Object.values((await createAccount(t, plan.id)).placement)).not.toContain(a.server.id);

    // Two copying at most; a move that forwards (for the records' old TTLs) takes no room, and
    // its time is over at once here (see `ended`).
    let most = 0;
    await eventually(async () => {
      const active = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM moves WHERE drain_of = $1 AND status NOT IN ('forwarding', 'completed', 'failed', 'canceled')`,
        [a.server.id],
      );
      most = Math.max(most, active.rows[0]?.n ?? 0);
      await t.db.query(`UPDATE moves SET forward_until = $2 WHERE drain_of = $1 AND status = 'forwarding'`, [
        a.server.id,
        t.clock.now(),
      ]);
      return (await t.get(`/v1/servers/${a.server.id}`)).body.status === 'decommissioned';
    });
    expect(most).toBeLessThanOrEqual(2);
    for (const account of placed) {
      const now = (await t.get(`/v1/accounts/${account.id}`)).body;
      expect(Object.values(now.placement)).not.toContain(a.server.id);
      expect(now.placement.database).toBe(LOCAL);
      const moves = (await t.get(`/v1/moves?account_id=${account.id}`)).body.data;
      expect(moves.map((m: { status: string }) => m.status)).toEqual(['completed']);
    }
    const events = (await t.get(`/v1/events?resource_id=${a.server.id}`)).body.data.map((e: { type: string }) => e.type);
    expect(events).toEqual(expect.arrayContaining(['server.draining', 'server.decommissioned']));
    expect((await t.post(`/v1/servers/${a.server.id}/drain`, {})).body.status).toBe('decommissioned');
    expect((await t.request('DELETE', `/v1/servers/${a.server.id}`)).status).toBe(204);
  });

  it('refuses a target that cannot take the role, has no room or is the server it is on, and anyone but the operator', async () => {
    const a = await runningServer('127.0.0.25');
    const dbOnly = await agents.enrolledServer({ roles: ['database'], ipv4: '127.0.0.26' });
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, { placement: { web: a.server.id, mail: LOCAL, database: LOCAL } });
    const refused = async (to: Record<string, string>, pointer: string, code: string) => {
      const r = await t.post(`/v1/accounts/${account.id}/move`, { to });
      expect(r.status, r.text).toBe(422);
      expect(r.body.errors).toContainEqual(expect.objectContaining({ pointer, code }));
    };
    await refused({ web: dbOnly.server.id }, '/to/web', 'unknown_server');
    await refused({ web: 'srv_00000000000000000000000099' }, '/to/web', 'unknown_server');
    await refused({ web: a.server.id }, '/to/web', 'same_server');
    const full = await agents.enrolledServer({ roles: ROLES, ipv4: '127.0.0.35', capacity: { accounts: 0 } });
    agents.startAgent(full.dataDir, full.identity);
    await eventually(async () => (await t.get(`/v1/servers/${full.server.id}`)).body.status === 'online');
    await refused({ web: full.server.id }, '/to/web', 'server_full');
    await refused({ mail: dbOnly.server.id, database: a.server.id }, '/to/mail', 'unknown_server');
    expect((await t.post(`/v1/accounts/${account.id}/move`, { to: {} })).status).toBe(422);
    expect((await t.post(`/v1/accounts/${account.id}/move`, { to: { web: a.server.id }, cutover: 'later' })).status).toBe(422);
    // Nothing was started.
    expect((await t.get(`/v1/moves?account_id=${account.id}`)).body.data).toEqual([]);

    const w = await world(t);
    const asReseller = await t.post(`/v1/accounts/${w.accountA.id}/move`, { to: { web: a.server.id } }, w.tokenA);
    expect(asReseller.status).toBe(403);
    expect((await t.get('/v1/moves', w.tokenA)).body.data).toEqual([]);
  });
});
