import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reloadNginx } from '../../src/provisioning/drivers/nginx-reload.js';
import { NginxWebDriver } from '../../src/provisioning/drivers/nginx.js';
import { type TestApp, eventually } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { daemon, daemonApp, daemonEnv, hostPort, httpGet, NO_DAEMONS } from './daemons.js';

describe.skipIf(!daemonEnv)(`nginx driver (${daemonEnv ? 'BERTH_DRIVER_WEB=nginx' : NO_DAEMONS})`, () => {
  let t: TestApp;
  let accountId: string;
  beforeAll(async () => {
    t = await daemonApp({ BERTH_NGINX_TRAFFIC_MS: '200' });
    accountId = (await createAccountOnNewPlan(t)).id;
  });
  afterAll(async () => t?.close());

  const site = async (id: string) => (await t.get(`/v1/sites/${id}`)).body;

  it('serves the live deployment by hostname and alias, 503 while suspended, nothing once deleted', async () => {
    const name = `web-${Date.now().toString(36)}.com`;
    expect((await t.post('/v1/domains', { account_id: accountId, name })).status).toBe(201);
    const created = await t.post('/v1/sites', { account_id: accountId, hostname: name, aliases: [`www.${name}`] });
    expect(created.status, created.text).toBe(202);
    const id = created.body.id as string;
    await eventually(async () => (await site(id)).status === 'active');

    const deploy = async (html: string) => {
      const r = await t.request('POST', `/v1/sites/${id}/deployments`, {
        raw: tarGz([{ path: 'index.html', content: html }]),
        headers: { 'content-type': 'application/gzip' },
      });
      expect(r.status, r.text).toBe(202);
      await eventually(async () => (await site(id)).current_deployment_id === r.body.id);
    };
    await deploy('<h1>first</h1>');
    await eventually(async () => (await httpGet(name)).body === '<h1>first</h1>');
    await eventually(async () => (await httpGet(`www.${name}`)).body === '<h1>first</h1>');
    await deploy('<h1>second</h1>');
    await eventually(async () => (await httpGet(name)).body === '<h1>second</h1>');

    expect((await t.post(`/v1/sites/${id}/suspend`, { reason: 'abuse' })).status).toBe(200);
    // A reload is asynchronous (old workers may answer a moment longer): every check waits for it.
    await eventually(async () => (await httpGet(name)).status === 503);
    await eventually(async () => (await httpGet(`www.${name}`)).body.includes('This site is suspended'));
    expect((await t.post(`/v1/sites/${id}/unsuspend`, {})).status).toBe(200);
    await eventually(async () => (await httpGet(name)).status === 200);
    await eventually(async () => (await httpGet(`www.${name}`)).status === 200);

    expect((await t.request('DELETE', `/v1/sites/${id}`)).status).toBe(202);
    await eventually(async () => (await t.get(`/v1/sites/${id}`)).status === 404);
    // The catch-all server of the test configuration answers 404 for a host nobody serves.
    await eventually(async () => (await httpGet(name)).status === 404);
    expect(readdirSync(daemonEnv!.BERTH_NGINX_SITES_DIR as string)).not.toContain(`${id}.conf`);
  });

  it("counts what a site sends from nginx's access log into the account's bandwidth", async () => {
    const { id: account } = await createAccountOnNewPlan(t);
    const name = `traffic-${Date.now().toString(36)}.com`;
    expect((await t.post('/v1/domains', { account_id: account, name })).status).toBe(201);
    const created = await t.post('/v1/sites', { account_id: account, hostname: name });
    expect(created.status, created.text).toBe(202);
    const id = created.body.id as string;
    await eventually(async () => (await site(id)).status === 'active');
    const page = 'x'.repeat(5000);
    const r = await t.request('POST', `/v1/sites/${id}/deployments`, {
      raw: tarGz([{ path: 'big.html', content: page }]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(r.status, r.text).toBe(202);
    let fetched = 0;
    await eventually(async () => {
      fetched++;
      return (await httpGet(name, '/big.html')).body === page;
    });
    for (let i = 0; i < 3; i++) expect((await httpGet(name, '/big.html')).body).toBe(page);
    fetched += 3;
    const today = new Date().toISOString().slice(0, 10);
    // Every 5,000-byte answer once; the 404s before the deployment went live are small pages.
    await eventually(async () => {
      const { usage } = (await t.get(`/v1/accounts/${account}/usage`)).body;
      return usage.bandwidth_bytes >= 5000 * 4 && usage.bandwidth_daily.at(-1)?.date === today;
    });
    const { usage } = (await t.get(`/v1/accounts/${account}/usage`)).body;
    expect(usage.bandwidth_bytes).toBeLessThanOrEqual(fetched * 5000 + 1000 * fetched);
    expect(usage.bandwidth_daily.reduce((n: number, d: { bytes: number }) => n + d.bytes, 0)).toBe(usage.bandwidth_bytes);
  });

  it('a reload waits for the workers of the configuration before it, a freeze at most a bound, and the thaw until no frozen worker answers', async () => {
    const conf = {
      bin: 'nginx',
      conf: daemonEnv!.BERTH_NGINX_CONF as string,
      sitesDir: daemonEnv!.BERTH_NGINX_SITES_DIR as string,
    };
    const driver = new NginxWebDriver(t.dataDir, conf, { listen: [daemonEnv!.BERTH_WEB_LISTEN as string], listenTls: [] });
    const root = path.join(t.dataDir, 'frozen-probe');
    mkdirSync(root);
    writeFileSync(path.join(root, 'index.html'), 'served');
    writeFileSync(path.join(root, 'large.bin'), Buffer.alloc(64 * 2 ** 20));
    const spec = { id: 'frozen-probe', hostnames: ['frozen.example.com'], root, suspended: false, tls: null, php: null };
    await driver.applySite(spec);
    await eventually(async () => (await httpGet('frozen.example.com')).body === 'served');
    // A download begun before the reloads, its client not reading: a worker of the old configuration holds it.
    // (A worker of the configuration before the site may still take a connection a moment longer, and answer 404.)
    const { host, port } = hostPort('BERTH_IT_HTTP');
    const download = await eventually(async () => {
      const socket = connect({ host, port });
      socket.write('GET /large.bin HTTP/1.1\r\nHost: frozen.example.com\r\n\r\n');
      const [first] = (await once(socket, 'data')) as [Buffer];
      socket.pause();
      if (first.toString('latin1').startsWith('HTTP/1.1 200')) return socket;
      socket.destroy();
      return undefined;
    });
    try {
      // A reload that waits for the old configuration's workers waits for it (here as long as it takes).
      const reload = async () => void execFileSync('nginx', ['-c', conf.conf, '-s', 'reload']);
      const drained = reloadNginx(conf.conf, reload, { drainMs: 600_000 }).then(() => 'drained');
      const pending = () => Promise.race([drained, Promise.resolve('waiting')]);
      // The freeze waits for it no longer than its bound (the download could be another site's):
      // in effect then, for every new request.
      await driver.applySite({ ...spec, frozen: true });
      expect((await httpGet('frozen.example.com')).status).toBe(503);
      expect(await pending()).toBe('waiting');
      download.destroy();
      expect(await drained).toBe('drained');
      await driver.applySite(spec);
      // Thawed: no worker of the frozen configuration is left to answer 503.
      expect(await httpGet('frozen.example.com')).toEqual({ status: 200, body: 'served' });
    } finally {
      download.destroy();
      await driver.removeSite('frozen-probe');
    }
  });

  it('a reload fails at once where nginx stops during it, and unsignalled where its pid file names another program', async () => {
    const conf = daemonEnv!.BERTH_NGINX_CONF as string;
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const started = Date.now();
      await expect(reloadNginx(conf, () => daemon('nginx', 'stop'))).rejects.toThrow(
        'nginx is not running (its master exited during the reload)',
      );
      expect(Date.now() - started).toBeLessThan(30_000);
      // A pid file that outlived its nginx, its pid gone to another process: that one is not signalled.
      writeFileSync(`${daemonEnv!.BERTH_IT_DAEMONS}/nginx/nginx.pid`, `${other.pid}\n`);
      let signalled = false;
      const signal = async () => void (signalled = true);
      await expect(reloadNginx(conf, signal)).rejects.toThrow(`pid ${other.pid} from nginx.pid is another program's`);
      expect(signalled).toBe(false);
    } finally {
      other.kill('SIGKILL');
      await daemon('nginx', 'start');
    }
  });

  it('restores the previous server block when nginx -t rejects the new one, and nginx keeps serving', async () => {
    const sitesDir = daemonEnv!.BERTH_NGINX_SITES_DIR as string;
    const conf = { bin: 'nginx', conf: daemonEnv!.BERTH_NGINX_CONF as string, sitesDir };
    const listenTls = [daemonEnv!.BERTH_WEB_LISTEN_TLS as string];
    const driver = new NginxWebDriver(t.dataDir, conf, { listen: [daemonEnv!.BERTH_WEB_LISTEN as string], listenTls });
    const root = path.join(t.dataDir, 'probe');
    mkdirSync(root);
    writeFileSync(path.join(root, 'index.html'), 'probe');
    const spec = { id: 'probe-site', hostnames: ['probe.example.com'], root, suspended: false, tls: null, php: null };
    await driver.applySite(spec);
    // A reload is asynchronous: nginx's new workers take over a moment after the signal.
    await eventually(async () => (await httpGet('probe.example.com')).body === 'probe');
    // A block nginx refuses (a port out of range): `nginx -t` fails and the file is taken back.
    const before = readFileSync(path.join(sitesDir, 'probe-site.conf'), 'utf8');
    const rejecting = new NginxWebDriver(t.dataDir, conf, { listen: ['127.0.0.1:99999'], listenTls });
    await expect(rejecting.applySite(spec)).rejects.toThrow(/nginx -t failed: .*invalid port/);
    expect(readFileSync(path.join(sitesDir, 'probe-site.conf'), 'utf8')).toBe(before);
    await expect(rejecting.applySite({ ...spec, id: 'probe-new' })).rejects.toThrow(/invalid port/);
    expect(readdirSync(sitesDir)).not.toContain('probe-new.conf');
    await eventually(async () => (await httpGet('probe.example.com')).body === 'probe');
    await driver.removeSite('probe-site');
    expect(readdirSync(sitesDir)).not.toContain('probe-site.conf');
  });
});
