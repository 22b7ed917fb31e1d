import { X509Certificate, createPrivateKey } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

/** The provider's mail host is every MX and has a certificate of Berth's issuer. */
const HOST = 'mail.hosting.test';
const tlsFile = (app: TestApp, name: string) => path.join(app.dataDir, 'rendered', 'mail', 'tls', name);
const records = async (app: TestApp, domain: string) =>
  (await app.get(`/v1/domains/${domain}/records?limit=100`)).body.data.map(
    (r: { name: string; type: string; content: string }) => `${r.name} ${r.type} ${r.content}`,
  ) as string[];

describe('a configured mail host', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { BERTH_MAIL_HOST: 'Mail.Hosting.Test.', BERTH_WEB_IPV4: '192.0.2.10', BERTH_CERTIFICATE_SCHEDULER_MS: '50' },
    });
  });
  afterAll(async () => t.close());

  const issued = (notSerial?: string) =>
    eventually(async () => {
      const r = await t.get('/v1/mail-server');
      return r.body.certificate && r.body.certificate.serial !== notSerial ? r.body : null;
    });

  it('is the MX of every mail-enabled domain; no `mail` host is added to the zone', async () => {
    const account = await createAccount(t, (await createPlan(t)).id);
    expect((await t.post('/v1/domains', { account_id: account.id, name: 'mx-host.com', mail_enabled: true })).status).toBe(201);
    const zone = await records(t, 'mx-host.com');
    expect(zone).toEqual(expect.arrayContaining([`@ MX 10 ${HOST}.`, '@ TXT v=spf1 mx -all']));
    expect(zone.filter((r) => r.startsWith('mail '))).toEqual([]);
  });

  it('gets a certificate from the internal CA, written for the submission service with its key 0600', async () => {
    const server = await issued();
    expect(server).toMatchObject({ host: HOST, certificate_error: null, certificate: { issuer: 'internal', names: [HOST] } });
    const root = new X509Certificate((await t.get('/v1/certificate-authorities/internal')).body.certificate_pem);
    // The loop records the certificate, then hands it to the mail driver, which writes it.
    const served = await eventually(async () => {
      const crt = existsSync(tlsFile(t, 'mail.crt')) ? new X509Certificate(readFileSync(tlsFile(t, 'mail.crt'))) : null;
      return crt?.serialNumber.toLowerCase() === server.certificate.serial ? crt : null;
    });
    expect(served.checkHost(HOST)).toBe(HOST);
    expect(served.verify(root.publicKey)).toBe(true);
    expect(served.checkPrivateKey(createPrivateKey(readFileSync(tlsFile(t, 'mail.key'))))).toBe(true);
    expect(statSync(tlsFile(t, 'mail.key')).mode & 0o777).toBe(0o600);
    // Sealed at rest: the database holds no private key in the clear.
    const row = await t.db.query<{ private_key_sealed: string }>('SELECT private_key_sealed FROM host_certificates');
    expect(row.rows[0]!.private_key_sealed).not.toContain('PRIVATE KEY');
  });

  it('is renewed once two thirds of its lifetime has passed, and the new one is written', async () => {
    const first = (await issued()).certificate;
    const row = await t.db.query<{ renew_after: Date }>('SELECT renew_after FROM host_certificates WHERE name = $1', [HOST]);
    t.clock.advance(new Date(row.rows[0]!.renew_after).getTime() - t.clock.now().getTime() + 60_000);
    const renewed = (await issued(first.serial)).certificate;
    await eventually(
      async () => new X509Certificate(readFileSync(tlsFile(t, 'mail.crt'))).serialNumber.toLowerCase() === renewed.serial,
    );
    expect(Date.parse(renewed.not_after)).toBeGreaterThan(Date.parse(first.not_after));
  });

  it('is readable by any authenticated caller, and by nobody else', async () => {
    expect((await t.request('GET', '/v1/mail-server', { token: null })).status).toBe(401);
  });
});

describe('without a mail host', () => {
  it('and without web addresses, a mail-enabled domain gets no MX that could name nothing', async () => {
    const t = await createTestApp();
    try {
      const account = await createAccount(t, (await createPlan(t)).id);
      expect((await t.post('/v1/domains', { account_id: account.id, name: 'no-mx.com', mail_enabled: true })).status).toBe(201);
      expect((await records(t, 'no-mx.com')).filter((r) => / MX |v=spf1/.test(r))).toEqual([]);
      expect((await t.get('/v1/mail-server')).body).toEqual({ host: null, certificate: null, certificate_error: null });
    } finally {
      await t.close();
    }
  });

  it('an issuer that fails shows why, and tries again only after a backoff', async () => {
    const t = await createTestApp({ env: { BERTH_MAIL_HOST: HOST, BERTH_ACME_DIRECTORY_URL: 'https://127.0.0.1:1/directory' } });
    try {
      const server = await eventually(async () =>
        (await t.get('/v1/mail-server')).body.certificate_error ? (await t.get('/v1/mail-server')).body : null,
      );
      expect(server).toMatchObject({ host: HOST, certificate: null, certificate_error: { code: 'certificate_failed' } });
      expect(server.certificate_error.detail).toBe('ACME server https://127.0.0.1:1/directory: no answer');
      const row = await t.db.query<{ retry_at: Date; failures: number }>('SELECT retry_at, failures FROM host_certificates');
      expect(row.rows[0]!.failures).toBe(1);
      expect(new Date(row.rows[0]!.retry_at).getTime() - t.clock.now().getTime()).toBeGreaterThanOrEqual(4 * 60_000);
    } finally {
      await t.close();
    }
  });
});
