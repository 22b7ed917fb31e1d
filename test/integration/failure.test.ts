import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, eventually } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { daemon, daemonApp, daemonEnv, dig, httpGet, NO_DAEMONS, smtp } from './daemons.js';

/**
 * A daemon that is down: the API write succeeds, the resource shows `sync_state: error` with
 * the reason, and once the daemon is back the queue's retries (or the resync) converge it.
 */
describe.skipIf(!daemonEnv)(`a daemon that is down (${daemonEnv ? 'real daemons' : NO_DAEMONS})`, () => {
  let t: TestApp;
  let accountId: string;
  type Daemon = 'powerdns' | 'nginx' | 'postfix' | 'opendkim';
  const stopped = new Set<Daemon>();
  beforeAll(async () => {
    t = await daemonApp();
    accountId = (await createAccountOnNewPlan(t)).id;
  });
  afterEach(async () => {
    for (const name of stopped) await daemon(name, 'start');
    stopped.clear();
  });
  afterAll(async () => t?.close());
  const stop = async (name: Daemon) => {
    stopped.add(name);
    await daemon(name, 'stop');
  };
  const start = async (name: Daemon) => {
    stopped.delete(name);
    await daemon(name, 'start');
  };
  const unique = (p: string) => `${p}-${Date.now().toString(36)}.com`;

  it('PowerDNS: the zone waits in sync_state error and is served once PowerDNS is back', async () => {
    await stop('powerdns');
    const name = unique('down-dns');
    const created = await t.post('/v1/domains', { account_id: accountId, name });
    expect(created.status, created.text).toBe(201);
    const erred = await eventually(async () => {
      const d = (await t.get(`/v1/domains/${created.body.id}`)).body;
      return d.sync_state === 'error' ? d : null;
    });
    expect(erred.sync_error).toMatch(/^PowerDNS API unreachable \(ECONNREFUSED\)$/);
    // A second change while it is down: the zone that finally goes live is the latest.
    expect(
      (await t.post(`/v1/domains/${created.body.id}/records`, { name: 'late', type: 'A', content: '192.0.2.9' })).status,
    ).toBe(201);
    await start('powerdns');
    await eventually(async () => (await t.get(`/v1/domains/${created.body.id}`)).body.sync_state === 'in_sync', 60_000);
    expect(await dig(`late.${name}`, 'A')).toEqual(['192.0.2.9']);
    const serial = (await t.get(`/v1/domains/${created.body.id}`)).body.dns.serial;
    expect((await dig(name, 'SOA'))[0]?.split(' ')[2]).toBe(String(serial));
  }, 180_000);

  it('nginx: a suspension waits in sync_state error and is served once nginx is back', async () => {
    const name = unique('down-web');
    await t.post('/v1/domains', { account_id: accountId, name });
    const site = (await t.post('/v1/sites', { account_id: accountId, hostname: name })).body;
    await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).body.sync_state === 'in_sync');
    const dep = await t.request('POST', `/v1/sites/${site.id}/deployments`, {
      raw: tarGz([{ path: 'index.html', content: 'up' }]),
      headers: { 'content-type': 'application/gzip' },
    });
    await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).body.current_deployment_id === dep.body.id);
    await eventually(async () => (await httpGet(name)).body === 'up');

    await stop('nginx');
    expect((await t.post(`/v1/sites/${site.id}/suspend`, { reason: 'unpaid' })).status).toBe(200);
    const erred = await eventually(async () => {
      const s = (await t.get(`/v1/sites/${site.id}`)).body;
      return s.sync_state === 'error' ? s : null;
    });
    // No pid file (nginx -s reload fails), or one whose pid is gone or went to another process.
    expect(erred.sync_error).toMatch(/^nginx (-s reload failed: |is not running)/);
    await start('nginx');
    await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).body.sync_state === 'in_sync', 60_000);
    await eventually(async () => (await httpGet(name)).status === 503);
  }, 180_000);

  it('Postfix: a new mailbox waits in sync_state error and is accepted once Postfix is back', async () => {
    const name = unique('down-mail');
    await t.post('/v1/domains', { account_id: accountId, name, mail_enabled: true });
    await stop('postfix');
    const box = await t.post('/v1/emails', { address: `late@${name}`, password: 'a password long enough', quota_mb: 5 });
    expect(box.status, box.text).toBe(201);
    const erred = await eventually(async () => {
      const e = (await t.get(`/v1/emails/${box.body.id}`)).body;
      return e.sync_state === 'error' ? e : null;
    });
    expect(erred.sync_error).toMatch(/^postfix is not running/);
    await start('postfix');
    await eventually(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync', 60_000);
    const rcpt = await smtp(['EHLO client.example', 'MAIL FROM:<a@example.org>', `RCPT TO:<late@${name}>`]);
    expect(rcpt.at(-1)?.code).toBe(250);
  }, 180_000);

  it('OpenDKIM: a new mailbox waits in sync_state error and is applied once the signer is back', async () => {
    const name = unique('down-dkim');
    await t.post('/v1/domains', { account_id: accountId, name, mail_enabled: true });
    await stop('opendkim');
    const box = await t.post('/v1/emails', { address: `signed@${name}`, password: 'a password long enough', quota_mb: 5 });
    expect(box.status, box.text).toBe(201);
    const erred = await eventually(async () => {
      const e = (await t.get(`/v1/emails/${box.body.id}`)).body;
      return e.sync_state === 'error' ? e : null;
    });
    expect(erred.sync_error).toMatch(/^opendkim is not running/);
    await start('opendkim');
    await eventually(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync', 60_000);
  }, 180_000);
});
