import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, eventually } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { daemonApp, daemonEnv, httpGet, NO_DAEMONS } from './daemons.js';

const env = daemonEnv ?? {};
const [httpsHost, httpsPort] = (env.BERTH_IT_HTTPS ?? ':0').split(':') as [string, string];

/** The root pebble signs with (made fresh at each start), read from its management interface. */
const pebbleRoot = () =>
  new Promise<string>((resolve, reject) => {
    https
      .get(env.BERTH_IT_ACME_ROOTS_URL as string, { ca: readFileSync(env.BERTH_IT_ACME_CA_FILE as string) }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });

/** An HTTPS request to nginx for `name`, trusting only `ca`: the body and the serial of the certificate it was served with. */
function httpsGet(name: string, ca: string): Promise<{ status: number; body: string; serial: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      { host: httpsHost, port: Number(httpsPort), servername: name, headers: { host: name }, ca, agent: false },
      (res) => {
        const serial = (res.socket as tls.TLSSocket).getPeerCertificate().serialNumber.toLowerCase();
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, serial }));
      },
    );
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
  });
}

describe.skipIf(!daemonEnv)(`ACME certificates from pebble, served by nginx (${daemonEnv ? 'real daemons' : NO_DAEMONS})`, () => {
  let t: TestApp;
  let accountId: string;
  let root: string;
  let name: string;
  let siteId: string;
  beforeAll(async () => {
    t = await daemonApp({
      BERTH_ACME_DIRECTORY_URL: env.BERTH_IT_ACME_DIRECTORY_URL as string,
      BERTH_ACME_CA_FILE: env.BERTH_IT_ACME_CA_FILE as string,
      BERTH_ACME_EMAIL: 'hostmaster@berth.test',
      // Every name of the test zones points at the loopback nginx pebble validates against.
      BERTH_WEB_IPV4: '127.0.0.1',
      BERTH_CERTIFICATE_SCHEDULER_MS: '200',
    });
    accountId = (await createAccountOnNewPlan(t)).id;
    root = await pebbleRoot();
  });
  afterAll(async () => t?.close());

  const site = async (id: string) => (await t.get(`/v1/sites/${id}`)).body;
  const settled = (id: string) =>
    eventually(async () => {
      const s = await site(id);
      return s.tls.status !== 'pending' && s.sync_state === 'in_sync' ? s : null;
    }, 120_000);

  it('issues by HTTP-01 for the hostname and alias and by DNS-01 for a wildcard alias; curl gets the live deployment over HTTPS', async () => {
    name = `acme-${Date.now().toString(36)}.com`;
    expect((await t.post('/v1/domains', { account_id: accountId, name })).status).toBe(201);
    const created = await t.post('/v1/sites', { account_id: accountId, hostname: name, aliases: [`www.${name}`, `*.${name}`] });
    expect(created.status, created.text).toBe(202);
    siteId = created.body.id;
    await eventually(async () => (await site(siteId)).status === 'active');
    const r = await t.request('POST', `/v1/sites/${siteId}/deployments`, {
      raw: tarGz([{ path: 'index.html', content: '<h1>over https</h1>' }]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(r.status, r.text).toBe(202);
    const s = await settled(siteId);
    expect(s.tls, JSON.stringify(s.tls)).toMatchObject({ mode: 'auto', status: 'active', issuer: 'acme', error: null });
    expect(s.tls.names).toEqual([name, `www.${name}`, `*.${name}`]);
    await eventually(async () => (await site(siteId)).current_deployment_id === r.body.id);

    // The acceptance check of the issue, with curl: pebble's root, the name resolved to nginx.
    const rootFile = `${t.dataDir}/pebble-root.pem`;
    (await import('node:fs')).writeFileSync(rootFile, root);
    for (const host of [name, `www.${name}`, `shop.${name}`]) {
      const { stdout } = await promisify(execFile)('curl', [
        '-sS',
        '--cacert',
        rootFile,
        '--resolve',
        `${host}:${httpsPort}:${httpsHost}`,
        `https://${host}:${httpsPort}/`,
      ]);
      expect(stdout, host).toBe('<h1>over https</h1>');
    }
    const served = await httpsGet(name, root);
    expect(served.serial).toBe((await t.get(`/v1/sites/${siteId}/certificate`)).body.serial);
    // The ACME proofs are gone from the zone once used.
    const records = (await t.get(`/v1/domains/${name}/records?limit=200`)).body.data as { name: string }[];
    expect(records.filter((x) => x.name.startsWith('_acme-challenge'))).toEqual([]);
  });

  it('renewal swaps the served certificate with no failed request; a failing renewal keeps it and says why', async () => {
    const before = await site(siteId);
    const oldSerial = (await httpsGet(name, root)).serial;
    let failures = 0;
    let requests = 0;
    let stop = false;
    const load = (async () => {
      while (!stop) {
        requests++;
        await httpsGet(`www.${name}`, root).then(
          (res) => res.status === 200 || failures++,
          () => failures++,
        );
      }
    })();
    t.clock.advance(Date.parse(before.tls.renew_after) - t.clock.now().getTime() + 60_000);
    const renewed = await eventually(async () => {
      const served = await httpsGet(name, root);
      return served.serial !== oldSerial ? served : null;
    }, 120_000);
    stop = true;
    await load;
    expect(failures, `${failures} of ${requests} requests failed`).toBe(0);
    expect(requests).toBeGreaterThan(1);
    expect(renewed.body).toBe('<h1>over https</h1>');
    const events = (await t.get(`/v1/events?resource_id=${siteId}&type=site.certificate.renewed`)).body.data;
    expect(events).toHaveLength(1);

    // The `www` name stops resolving: the next renewal fails, the certificate stays served.
    const www = (await t.get(`/v1/domains/${name}/records?limit=200`)).body.data.find(
      (x: { name: string; type: string }) => x.name === 'www' && x.type === 'A',
    );
    expect((await t.request('DELETE', `/v1/domains/${name}/records/${www.id}`)).status).toBe(204);
    // Only once PowerDNS no longer answers for it: a renewal before that would still succeed.
    await eventually(async () => (await t.get(`/v1/domains/${name}`)).body.sync_state === 'in_sync');
    const current = await site(siteId);
    t.clock.advance(Date.parse(current.tls.renew_after) - t.clock.now().getTime() + 60_000);
    const failed = await eventually(async () => {
      const s = await site(siteId);
      return s.tls.error ? s : null;
    }, 120_000);
    expect(failed.tls).toMatchObject({ status: 'active', issuer: 'acme', error: { code: 'certificate_failed' } });
    expect(failed.tls.error.detail).toMatch(/www\./);
    // nginx was reloaded meanwhile (the failure is recorded with a web apply): the certificate on
    // record is still the one served. (The test clock stands still past the renewal point, so a
    // renewal that validated before `www` went may have replaced the first renewed one.)
    await eventually(async () => (await site(siteId)).sync_state === 'in_sync');
    const kept = (await t.get(`/v1/sites/${siteId}/certificate`)).body;
    expect(kept.serial).toMatch(/^[0-9a-f]+$/);
    expect((await httpsGet(name, root)).serial).toBe(kept.serial);
    expect((await t.get(`/v1/events?resource_id=${siteId}&type=site.certificate.renewal_failed`)).body.data).toHaveLength(1);
  });

  it('an order that fails (a name that does not resolve) leaves the site on HTTP; fixing DNS and asking again succeeds', async () => {
    const other = `acme-fail-${Date.now().toString(36)}.com`;
    expect((await t.post('/v1/domains', { account_id: accountId, name: other })).status).toBe(201);
    const created = await t.post('/v1/sites', { account_id: accountId, hostname: other, aliases: [`shop.${other}`] });
    const id = created.body.id as string;
    const failed = await settled(id);
    expect(failed.tls).toMatchObject({ status: 'failed', error: { code: 'certificate_failed' } });
    expect(failed.tls.error.detail).toMatch(/shop\./);
    expect((await httpGet(other)).status).toBe(404); // served over HTTP (no deployment yet): not the catch-all's connection error
    const add = await t.post(`/v1/domains/${other}/records`, { name: 'shop', type: 'A', content: '127.0.0.1' });
    expect(add.status, add.text).toBe(201);
    expect((await t.request('PATCH', `/v1/sites/${id}`, { body: { tls: { mode: 'auto' } } })).status).toBe(200);
    const fixed = await eventually(async () => {
      const s = await site(id);
      return s.tls.status === 'active' && s.sync_state === 'in_sync' ? s : null;
    }, 120_000);
    expect(fixed.tls).toMatchObject({ issuer: 'acme', error: null, names: [other, `shop.${other}`] });
    // A reload is asynchronous: old workers may answer a moment longer with the old blocks.
    await eventually(async () => (await httpsGet(`shop.${other}`, root).catch(() => ({ status: 0 }))).status === 404);
  });
});
