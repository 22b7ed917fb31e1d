import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsDriver } from '../../src/provisioning/driver.js';
import { EmbeddedDnsDriver } from '../../src/provisioning/drivers/embedded-dns.js';
import type { Zone } from '../../src/provisioning/render/zone-file.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createAccountOnNewPlan } from '../helpers/fixtures.js';
import { testDir } from '../helpers/temp-dir.js';

const ENV = { BERTH_NAMESERVERS: 'ns1.host.example.net,ns2.host.example.net', BERTH_WEB_IPV4: '192.0.2.10' };
const namedCheckzone = spawnSync('named-checkzone', ['-v']).status === 0;

let t: TestApp;
let account: { id: string };
beforeAll(async () => {
  t = await createTestApp({ env: ENV });
  account = await createAccount(t, (await createPlan(t, undefined, { max_domains: 50 })).id);
});
afterAll(async () => t.close());

const rendered = (name: string) => path.join(t.dataDir, 'rendered', 'dns', `${name}.zone`);
const synced = (ref: string) => eventually(async () => (await t.get(`/v1/domains/${ref}`)).body.sync_state === 'in_sync');

describe('zone export', () => {
  it('GET .../zone is the zone as text/dns with the zone ETag', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'export-me.com', mail_enabled: true });
    const r = await t.get('/v1/domains/export-me.com/zone');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/dns; charset=utf-8');
    expect(r.headers.etag).toBe(`"${d.body.version}"`);
    expect(r.text).toContain('$ORIGIN export-me.com.');
    expect(r.text).toContain(
      `@\t3600\tIN\tSOA\tns1.host.example.net. hostmaster.export-me.com. ${d.body.dns.serial} 3600 900 1209600 300`,
    );
    expect(r.text).toContain('@\t3600\tIN\tTXT\t"v=spf1 mx -all"');
  });

  it.skipIf(!namedCheckzone)('named-checkzone accepts the export (needs bind9-utils)', async () => {
    await t.post('/v1/domains', { account_id: account.id, name: 'check-me.net', mail_enabled: true });
    const file = path.join(testDir('zone'), 'check-me.net.zone');
    writeFileSync(file, (await t.get('/v1/domains/check-me.net/zone')).text);
    const r = spawnSync('named-checkzone', ['-i', 'local', 'check-me.net', file], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });
});

describe('provisioning through the embedded DNS driver', () => {
  it('renders each zone and zones.conf; a change re-renders with the new serial; deletion removes the file', async () => {
    const d = await t.post('/v1/domains', { account_id: account.id, name: 'served.org' });
    expect(d.body.sync_state).toBe('pending');
    await synced('served.org');
    expect(readFileSync(rendered('served.org'), 'utf8')).toBe((await t.get('/v1/domains/served.org/zone')).text);
    const conf = readFileSync(path.join(t.dataDir, 'rendered', 'dns', 'zones.conf'), 'utf8');
    expect(conf).toContain(`zone "served.org" { type master; file "${rendered('served.org')}"; };`);

    const patched = await t.request('PATCH', '/v1/domains/served.org', { body: { mail_enabled: true } });
    await eventually(async () => readFileSync(rendered('served.org'), 'utf8').includes(`${patched.body.dns.serial} 3600 900`));
    expect(readFileSync(rendered('served.org'), 'utf8')).toContain('MX\t10 mail.served.org.');

    expect((await t.request('DELETE', '/v1/domains/served.org')).status).toBe(204);
    await eventually(async () => !existsSync(rendered('served.org')));
    await eventually(
      async () => !readFileSync(path.join(t.dataDir, 'rendered', 'dns', 'zones.conf'), 'utf8').includes('served.org'),
    );
  });
});

describe('terminating an account', () => {
  it('removes its zones from the DNS server', async () => {
    const acc = await createAccountOnNewPlan(t);
    await t.post('/v1/domains', { account_id: acc.id, name: 'terminated-zone.net' });
    await synced('terminated-zone.net');
    expect(existsSync(rendered('terminated-zone.net'))).toBe(true);
    expect((await t.request('DELETE', `/v1/accounts/${acc.id}`)).status).toBe(202);
    await eventually(async () => !existsSync(rendered('terminated-zone.net')), 30_000);
    expect((await t.get('/v1/domains/terminated-zone.net')).status).toBe(404);
  }, 180_000);
});

describe('a failing DNS driver', () => {
  it('leaves the write accepted, shows sync_state error with the reason, retries, and converges', async () => {
    let down = true;
    const dataDir = testDir('flaky');
    const real = new EmbeddedDnsDriver(dataDir);
    const flaky: DnsDriver = {
      name: 'flaky',
      async applyZone(zone: Zone) {
        if (down) throw new Error('DNS server unreachable');
        await real.applyZone(zone);
      },
      removeZone: (name) => real.removeZone(name),
    };
    const f = await createTestApp({ env: ENV, dataDir, deps: { dnsDriver: flaky } });
    try {
      const acc = await createAccount(f, (await createPlan(f)).id);
      const d = await f.post('/v1/domains', { account_id: acc.id, name: 'flaky.io' });
      expect(d.status).toBe(201);
      const failed = await eventually(async () => {
        const r = await f.get('/v1/domains/flaky.io');
        return r.body.sync_state === 'error' ? r.body : null;
      });
      expect(failed.sync_error).toBe('DNS server unreachable');
      down = false;
      await eventually(async () => (await f.get('/v1/domains/flaky.io')).body.sync_state === 'in_sync', 60_000);
      expect(existsSync(path.join(dataDir, 'rendered', 'dns', 'flaky.io.zone'))).toBe(true);
      expect((await f.get('/v1/domains/flaky.io')).body.sync_error).toBeNull();
    } finally {
      await f.close();
    }
  }, 180_000);
});
