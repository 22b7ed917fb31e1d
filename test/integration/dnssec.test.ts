import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { installed } from '../helpers/installed.js';
import { parentDnsServer } from '../helpers/parent-dns.js';
import { freePort } from '../helpers/ports.js';
import { daemonApp, daemonEnv, dig, NO_DAEMONS } from './daemons.js';

/**
 * DNSSEC (SPEC §19), proved with a validating client: `delv`, with the DS the API gives as its
 * only trust anchor, asks the authoritative server (PowerDNS; the embedded driver's signed zone
 * file served by NSD) and says "fully validated" for a record and for a name that does not
 * exist, before and after a change; a wrong DS fails. The parent is played by
 * test/helpers/parent-dns.ts.
 */

/** What delv says of `name` asked at `server` (`host:port`), with `ds` (`<tag> <alg> <type> <digest>`) as the trust anchor of `zone`. */
async function delv(dir: string, server: string, zone: string, ds: string, name: string): Promise<string> {
  const [tag, algorithm, type, digest] = ds.split(' ');
  const anchors = path.join(dir, `${zone}.anchors`);
  writeFileSync(anchors, `trust-anchors { "${zone}." static-ds ${tag} ${algorithm} ${type} "${digest}"; };\n`);
  const [host, port] = server.split(':') as [string, string];
  const out = await promisify(execFile)('delv', [`@${host}`, '-p', port, '-a', anchors, `+root=${zone}`, name, 'A']).catch(
    (err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }),
  );
  return `${out.stdout}${out.stderr}`;
}
describe.skipIf(!daemonEnv)(`DNSSEC on PowerDNS (${daemonEnv ? 'delv' : NO_DAEMONS})`, () => {
  let t: TestApp;
  let parent: Awaited<ReturnType<typeof parentDnsServer>>;
  let accountId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-delv-'));
  beforeAll(async () => {
    parent = await parentDnsServer();
    t = await daemonApp({ BERTH_DNSSEC_RESOLVER: parent.address });
    accountId = (await createAccountOnNewPlan(t)).id;
  });
  afterAll(async () => {
    await t?.close();
    await parent?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = (zone: string, ds: string, name: string) => delv(dir, daemonEnv?.BERTH_IT_DNS ?? '', zone, ds, name);

  it('signs the zone with Berth’s key: delv validates answers and denials with the API’s DS, before and after a change; a wrong DS fails', async () => {
    const name = `signed-${Date.now().toString(36)}.com`;
    const domain = (await t.post('/v1/domains', { account_id: accountId, name })).body;
    expect((await t.post(`/v1/domains/${domain.id}/records`, { name: 'api', type: 'A', content: '192.0.2.44' })).status).toBe(
      201,
    );
    const put = await t.request('PUT', `/v1/domains/${domain.id}/dnssec`, { body: { enabled: true } });
    expect(put.status, put.text).toBe(202);
    const signed = await eventually(async () => {
      const d = (await t.get(`/v1/domains/${domain.id}/dnssec`)).body;
      if (d.status === 'error') throw new Error(JSON.stringify(d.error));
      return d.status === 'pending_ds' && d;
    });
    const ds = signed.ds_records[0];
    const anchor = `${ds.key_tag} ${ds.algorithm} 2 ${ds.digest}`;
    // PowerDNS publishes the key Berth made, and the CDS for the parent.
    // (dig writes a long key or digest in pieces.)
    const joined = async (type: string) =>
      (await dig(name, type)).map((r) => {
        const [a, b, c, ...rest] = r.split(' ');
        return `${a} ${b} ${c} ${rest.join('').toUpperCase()}`;
      });
    expect(await joined('DNSKEY')).toEqual([signed.keys[0].dnskey.split(' IN DNSKEY ')[1].toUpperCase()]);
    expect(await joined('CDS')).toEqual([`${ds.key_tag} 13 2 ${ds.digest}`]);

    expect(await ask(name, anchor, `api.${name}`)).toMatch(/; fully validated[\s\S]*192\.0\.2\.44/);
    expect(await ask(name, anchor, `nothing-here.${name}`)).toMatch(/fully validated/);
    const wrong = `${ds.key_tag} 13 2 ${ds.digest.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'))}`;
    expect(await ask(name, wrong, `api.${name}`)).not.toMatch(/fully validated/);

    // A change is served signed (PowerDNS rectifies as it applies).
    expect((await t.post(`/v1/domains/${domain.id}/records`, { name: 'late', type: 'A', content: '192.0.2.45' })).status).toBe(
      201,
    );
    await eventually(async () => (await dig(`late.${name}`, 'A')).join() === '192.0.2.45');
    expect(await ask(name, anchor, `late.${name}`)).toMatch(/; fully validated[\s\S]*192\.0\.2\.45/);

    // The parent publishes the DS: active. Disabling, forced, asks the parent to remove it (RFC 8078)
    // while the zone stays signed; once it has been gone for its TTL (3,600 s: resolvers may hold
    // it that long), the zone is served unsigned.
    parent.published.set(name, ds);
    expect((await t.post(`/v1/domains/${domain.id}/dnssec/check`)).body.status).toBe('active');
    const off = await t.request('PUT', `/v1/domains/${domain.id}/dnssec`, { body: { enabled: false, force: true } });
    expect(off.status, off.text).toBe(202);
    // The CDS and the CDNSKEY are set in separate requests to PowerDNS: the test waits for both.
    const served = async (type: string) => (await dig(name, type)).join();
    await eventually(async () => (await served('CDS')) === '0 0 0 00' && (await served('CDNSKEY')) === '0 3 0 AA==');
    expect(await ask(name, anchor, `api.${name}`)).toMatch(/fully validated/);
    parent.published.delete(name);
    expect((await t.post(`/v1/domains/${domain.id}/dnssec/check`)).body.status).toBe('pending_disable');
    expect(await ask(name, anchor, `api.${name}`)).toMatch(/fully validated/);
    t.clock.advance(3_600_000);
    expect((await t.post(`/v1/domains/${domain.id}/dnssec/check`)).body.status).toBe('disabled');
    // The keys, the CDS and the CDNSKEY go in separate requests too: the test waits for all three.
    await eventually(async () => !(await served('DNSKEY')) && !(await served('CDS')) && !(await served('CDNSKEY')));
    expect(await dig(`api.${name}`, 'A')).toEqual(['192.0.2.44']);
  }, 120_000);
});

describe.skipIf(!installed('nsd') || !installed('dnssec-signzone'))(
  `DNSSEC on the embedded driver (${installed('nsd') ? 'its zone file served by NSD' : 'skipped: NSD is not installed'})`,
  () => {
    let t: TestApp;
    let nsd: ChildProcess | undefined;
    const dir = mkdtempSync(path.join(tmpdir(), 'berth-nsd-'));
    let server = '';
    beforeAll(async () => {
      t = await createTestApp({ env: { BERTH_NAMESERVERS: 'ns1.berth.invalid,ns2.berth.invalid' } });
    });
    afterAll(async () => {
      nsd?.kill('SIGKILL');
      await t?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** NSD serving the zone file the embedded driver wrote, as the user this test runs as. */
    async function serve(zone: string, file: string) {
      const port = await freePort();
      server = `127.0.0.1:${port}`;
      const conf = path.join(dir, 'nsd.conf');
      writeFileSync(
        conf,
        [
          'server:',
          `  ip-address: 127.0.0.1@${port}`,
          '  username: ""',
          '  chroot: ""',
          `  zonesdir: "${dir}"`,
          `  pidfile: "${dir}/nsd.pid"`,
          `  zonelistfile: "${dir}/zone.list"`,
          `  xfrdfile: "${dir}/xfrd.state"`,
          `  xfrdir: "${dir}"`,
          `  logfile: "${dir}/nsd.log"`,
          '  server-count: 1',
          'remote-control:',
          '  control-enable: no',
          'zone:',
          `  name: ${zone}`,
          `  zonefile: "${file}"`,
          '',
        ].join('\n'),
      );
      nsd = spawn('nsd', ['-d', '-c', conf], { stdio: 'ignore' });
      await eventually(async () => (await dig(zone, 'SOA', server)).length === 1, 30_000);
    }

    it('delv validates the zone file dnssec-signzone signed, and a change once served', async () => {
      const account = await createAccountOnNewPlan(t);
      const name = 'embedded-signed.com';
      const domain = (await t.post('/v1/domains', { account_id: account.id, name })).body;
      expect((await t.post(`/v1/domains/${domain.id}/records`, { name: 'api', type: 'A', content: '192.0.2.44' })).status).toBe(
        201,
      );
      expect((await t.request('PUT', `/v1/domains/${domain.id}/dnssec`, { body: { enabled: true } })).status).toBe(202);
      const signed = await eventually(async () => {
        const d = (await t.get(`/v1/domains/${domain.id}/dnssec`)).body;
        return d.status === 'pending_ds' && d;
      });
      const ds = signed.ds_records[0];
      const anchor = `${ds.key_tag} ${ds.algorithm} 2 ${ds.digest}`;
      const file = path.join(t.dataDir, 'rendered', 'dns', `${name}.zone`);
      await serve(name, file);
      expect(await delv(dir, server, name, anchor, `api.${name}`)).toMatch(/; fully validated[\s\S]*192\.0\.2\.44/);
      expect(await delv(dir, server, name, anchor, `nothing-here.${name}`)).toMatch(/fully validated/);
      const wrong = `${ds.key_tag} 13 2 ${ds.digest.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'))}`;
      expect(await delv(dir, server, name, wrong, `api.${name}`)).not.toMatch(/fully validated/);

      // A change, signed again and served once NSD reads the file again (SIGHUP).
      expect((await t.post(`/v1/domains/${domain.id}/records`, { name: 'late', type: 'A', content: '192.0.2.45' })).status).toBe(
        201,
      );
      await eventually(async () => readFileSync(file, 'utf8').includes('192.0.2.45'));
      nsd?.kill('SIGHUP');
      await eventually(async () => (await dig(`late.${name}`, 'A', server)).join() === '192.0.2.45', 30_000);
      expect(await delv(dir, server, name, anchor, `late.${name}`)).toMatch(/; fully validated[\s\S]*192\.0\.2\.45/);
    }, 120_000);
  },
);
