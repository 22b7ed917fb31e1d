import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { testAuthority, testCertificate, weakRsaKey } from '../helpers/certificates.js';
import { createAccount, createPlan, createToken, world } from '../helpers/fixtures.js';

let t: TestApp;
let w: Awaited<ReturnType<typeof world>>;
let n = 0;
beforeAll(async () => {
  t = await createTestApp();
  w = await world(t);
  await t.request('PATCH', `/v1/accounts/${w.accountA.id}`, { body: { limit_overrides: { max_domains: 100, max_sites: 100 } } });
});
afterAll(async () => t.close());

const webDir = (app: TestApp) => path.join(app.dataDir, 'rendered', 'web');
const serverBlock = (app: TestApp, id: string) => readFileSync(path.join(webDir(app), 'sites', `${id}.conf`), 'utf8');
const get = async (app: TestApp, id: string) => (await app.get(`/v1/sites/${id}`)).body;
const eventTypes = async (app: TestApp, id: string) =>
  (await app.get(`/v1/events?resource_id=${id}`)).body.data.map((e: { type: string }) => e.type) as string[];

async function newSite(app: TestApp, accountId: string, body: Record<string, unknown> = {}) {
  const name = `tls${n++}-${Date.now().toString(36)}.com`;
  expect((await app.post('/v1/domains', { account_id: accountId, name })).status).toBe(201);
  const r = await app.post('/v1/sites', { account_id: accountId, hostname: name, aliases: [`www.${name}`], ...body });
  if (r.status !== 202) throw new Error(r.text);
  await eventually(async () => (await get(app, r.body.id)).status === 'active');
  return { id: r.body.id as string, name };
}
const settled = (app: TestApp, id: string) =>
  eventually(async () => {
    const s = await get(app, id);
    return s.tls.status !== 'pending' && s.sync_state === 'in_sync' ? s : null;
  });

describe('automatic certificates from the internal CA (no ACME directory configured)', () => {
  it('a site on a plan with ssl gets a certificate for every name, signed by the internal root, served over HTTPS', async () => {
    const site = await newSite(t, w.accountA.id);
    const s = await settled(t, site.id);
    expect(s.tls).toMatchObject({
      mode: 'auto',
      status: 'active',
      issuer: 'internal',
      names: [site.name, `www.${site.name}`],
      redirect_http: false,
      hsts: false,
      error: null,
    });
    expect(s.url).toBe(`https://${site.name}/`);
    const lifetime = Date.parse(s.tls.expires_at) - Date.parse(s.tls.not_before);
    expect(Date.parse(s.tls.renew_after) - Date.parse(s.tls.not_before)).toBeCloseTo((lifetime * 2) / 3, -4);

    const cert = await t.get(`/v1/sites/${site.id}/certificate`);
    expect(cert.status).toBe(200);
    expect(cert.body).toMatchObject({ issuer: 'internal', names: [site.name, `www.${site.name}`], chain_pem: '' });
    expect(JSON.stringify(cert.body)).not.toMatch(/PRIVATE KEY/);
    const ca = await t.get(`/v1/certificate-authorities/internal`, w.tokenAccountA);
    expect(ca.status).toBe(200);
    const leaf = new X509Certificate(cert.body.certificate_pem);
    const root = new X509Certificate(ca.body.certificate_pem);
    expect(leaf.checkIssued(root) && leaf.verify(root.publicKey)).toBe(true);
    expect(ca.body.fingerprint_sha256).toBe(root.fingerprint256.replaceAll(':', '').toLowerCase());
    expect(cert.body.fingerprint_sha256).toBe(leaf.fingerprint256.replaceAll(':', '').toLowerCase());

    // The web server's view: an HTTPS block with the certificate; the key readable by its owner only.
    const block = serverBlock(t, site.id);
    expect(block).toContain('ssl http2;');
    expect(block).toContain('ssl_protocols TLSv1.2 TLSv1.3;');
    const keyFile = path.join(webDir(t), 'certs', `${site.id}.key`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(new X509Certificate(readFileSync(path.join(webDir(t), 'certs', `${site.id}.crt`))).serialNumber).toBe(
      leaf.serialNumber,
    );
    // Sealed at rest: the database holds no private key in the clear.
    const stored = await t.db.query<{ k: string }>('SELECT private_key_sealed AS k FROM certificates WHERE site_id = $1', [
      site.id,
    ]);
    expect(stored.rows[0]!.k).not.toMatch(/PRIVATE KEY/);
    const ops = (await t.get(`/v1/operations?resource_id=${site.id}&type=site.certificate.issue`)).body.data;
    expect(ops).toMatchObject([{ status: 'succeeded' }]);
    expect(await eventTypes(t, site.id)).toContain('site.certificate.issued');
  });

  it('adding an alias re-issues for the new set of names; redirect and HSTS reach the server block', async () => {
    const site = await newSite(t, w.accountA.id);
    const first = (await settled(t, site.id)).tls;
    const r = await t.request('PATCH', `/v1/sites/${site.id}`, {
      body: { aliases: [`www.${site.name}`, `shop.${site.name}`], tls: { redirect_http: true, hsts: true } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.tls).toMatchObject({ mode: 'auto', status: 'pending', redirect_http: true, hsts: true });
    const s = await eventually(async () => {
      const x = await settled(t, site.id);
      return x.tls.names.length === 3 ? x : null;
    });
    expect(s.tls.names).toEqual([site.name, `www.${site.name}`, `shop.${site.name}`]);
    expect(s.tls.not_before >= first.not_before).toBe(true);
    const block = serverBlock(t, site.id);
    expect(block).toContain('return 308 https://$host$request_uri;');
    expect(block).toContain('add_header Strict-Transport-Security "max-age=31536000" always;');
    expect(block).toContain('location ^~ /.well-known/acme-challenge/');
  });

  it('mode none withdraws the certificate: plain HTTP only, the files gone, GET .../certificate a 404', async () => {
    const site = await newSite(t, w.accountA.id);
    await settled(t, site.id);
    const r = await t.request('PATCH', `/v1/sites/${site.id}`, { body: { tls: { mode: 'none' } } });
    expect(r.body.tls).toMatchObject({ mode: 'none', status: 'none', issuer: null, names: [] });
    await eventually(async () => (await get(t, site.id)).sync_state === 'in_sync');
    expect(serverBlock(t, site.id)).not.toContain('ssl');
    expect(existsSync(path.join(webDir(t), 'certs', `${site.id}.key`))).toBe(false);
    expect((await t.get(`/v1/sites/${site.id}/certificate`)).status).toBe(404);
    // Back to auto: a new certificate.
    await t.request('PATCH', `/v1/sites/${site.id}`, { body: { tls: { mode: 'auto' } } });
    expect((await settled(t, site.id)).tls.status).toBe('active');
  });

  it('a plan without ssl: mode none by default; auto or a custom certificate is a 403 feature_unavailable', async () => {
    const plan = await createPlan(t, undefined, { features: [] });
    const account = await createAccount(t, plan.id);
    const site = await newSite(t, account.id);
    expect((await get(t, site.id)).tls).toMatchObject({ mode: 'none', status: 'none' });
    const patch = await t.request('PATCH', `/v1/sites/${site.id}`, { body: { tls: { mode: 'auto' } } });
    expect(patch.status).toBe(403);
    expect(patch.body).toMatchObject({ code: 'feature_unavailable', feature: 'ssl' });
    const name = `nossl${n++}.${site.name}`;
    const create = await t.post('/v1/sites', { account_id: account.id, hostname: name, tls: { mode: 'auto' } });
    expect(create.body.code).toBe('feature_unavailable');
    const ca = await testAuthority();
    const put = await t.request('PUT', `/v1/sites/${site.id}/certificate`, {
      body: await testCertificate(ca, [site.name, `www.${site.name}`]),
    });
    expect(put.status).toBe(403);
    expect((await get(t, site.id)).tls.mode).toBe('none');
  });

  it('a plan that loses ssl turns nothing off: its sites keep HTTPS through other changes, and cannot turn it on again', async () => {
    const plan = await createPlan(t, undefined, { features: ['ssl'] });
    const account = await createAccount(t, plan.id);
    const site = await newSite(t, account.id);
    expect((await settled(t, site.id)).tls).toMatchObject({ mode: 'auto', status: 'active' });
    const merge = { 'content-type': 'application/merge-patch+json' };
    expect((await t.request('PATCH', `/v1/plans/${plan.id}`, { body: { features: [] }, headers: merge })).status).toBe(200);
    expect((await get(t, site.id)).tls).toMatchObject({ mode: 'auto', status: 'active' });
    expect(serverBlock(t, site.id)).toContain('ssl http2;');
    // Other changes keep it: with its names changed, it gets a certificate for them, as a renewal would.
    const kept = await t.request('PATCH', `/v1/sites/${site.id}`, { body: { aliases: [] }, headers: merge });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.tls.mode).toBe('auto');
    expect((await settled(t, site.id)).tls).toMatchObject({ status: 'active', names: [site.name] });
    // A failed certificate is not asked for again.
    await t.db.query(`UPDATE certificates SET status = 'failed' WHERE site_id = $1`, [site.id]);
    const retry = await t.request('PATCH', `/v1/sites/${site.id}`, { body: { tls: { mode: 'auto' } }, headers: merge });
    expect(retry.status).toBe(403);
    expect(retry.body).toMatchObject({ code: 'feature_unavailable', feature: 'ssl' });
    // Turned off, it cannot be turned on again.
    const off = await t.request('PATCH', `/v1/sites/${site.id}`, { body: { tls: { mode: 'none' } }, headers: merge });
    expect(off.status, off.text).toBe(200);
    const on = await t.request('PATCH', `/v1/sites/${site.id}`, { body: { tls: { mode: 'auto' } }, headers: merge });
    expect(on.status).toBe(403);
    expect(on.body).toMatchObject({ code: 'feature_unavailable', feature: 'ssl' });
  });

  it('reach: another tenant sees neither the certificate nor can upload one (404); sites:read reads it', async () => {
    const site = await newSite(t, w.accountA.id);
    await settled(t, site.id);
    expect((await t.get(`/v1/sites/${site.id}/certificate`, w.tokenB)).status).toBe(404);
    const ca = await testAuthority();
    const body = await testCertificate(ca, [site.name, `www.${site.name}`]);
    expect((await t.request('PUT', `/v1/sites/${site.id}/certificate`, { body, token: w.tokenB })).status).toBe(404);
    const reader = await createToken(t, { principal: { kind: 'reseller', id: w.resellerA.id }, scopes: ['sites:read'] });
    expect((await t.get(`/v1/sites/${site.id}/certificate`, reader)).status).toBe(200);
    const put = await t.request('PUT', `/v1/sites/${site.id}/certificate`, { body, token: reader });
    expect(put.body).toMatchObject({ code: 'insufficient_scope', scope: 'certificates:write' });
    const writer = await createToken(t, { principal: { kind: 'reseller', id: w.resellerA.id }, scopes: ['certificates:write'] });
    expect((await t.request('PUT', `/v1/sites/${site.id}/certificate`, { body, token: writer })).status).toBe(200);
  });
});

describe('wildcard aliases and expiry', () => {
  it('a wildcard alias must lie under a domain of the account; the hostname cannot be one', async () => {
    const name = `wild${n++}-${Date.now().toString(36)}.com`;
    expect((await t.post('/v1/domains', { account_id: w.accountA.id, name })).status).toBe(201);
    const bad = await t.post('/v1/sites', { account_id: w.accountA.id, hostname: `*.${name}`, aliases: ['*.elsewhere-x.com'] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/aliases/0', '/hostname']);
    const ok = await t.post('/v1/sites', { account_id: w.accountA.id, hostname: name, aliases: [`*.${name}`] });
    expect(ok.status, ok.text).toBe(202);
    const s = await settled(t, ok.body.id);
    expect(s.tls.names).toEqual([name, `*.${name}`]);
    expect(serverBlock(t, ok.body.id)).toContain(`server_name ${name} *.${name};`);
  });

  it('a served certificate past its end shows as expired', async () => {
    const site = await newSite(t, w.accountA.id);
    await settled(t, site.id);
    await t.db.query(`UPDATE certificates SET not_after = now() - interval '1 minute' WHERE site_id = $1`, [site.id]);
    expect((await get(t, site.id)).tls.status).toBe('expired');
  });
});

describe('custom certificates', () => {
  it('each check fails with its pointer and code, and nothing changes', async () => {
    const site = await newSite(t, w.accountA.id);
    const before = await settled(t, site.id);
    const names = [site.name, `www.${site.name}`];
    const ca = await testAuthority();
    const good = await testCertificate(ca, names);
    const other = await testCertificate(ca, names);
    const put = (body: unknown) => t.request('PUT', `/v1/sites/${site.id}/certificate`, { body });
    const cases: [unknown, string, string][] = [
      [{ ...good, private_key_pem: other.private_key_pem }, '/private_key_pem', 'key_mismatch'],
      [
        await testCertificate(ca, names, { now: new Date(Date.now() - 40 * 86_400_000), days: 30 }),
        '/certificate_pem',
        'expired',
      ],
      [await testCertificate(ca, names, { now: new Date(Date.now() + 3 * 86_400_000) }), '/certificate_pem', 'not_yet_valid'],
      [await testCertificate(ca, [site.name]), '/certificate_pem', 'names_not_covered'],
      [{ ...good, chain_pem: (await testAuthority()).certificate_pem }, '/chain_pem', 'broken_chain'],
      [await testCertificate(ca, names, { keyPem: weakRsaKey() }), '/private_key_pem', 'unsupported_key'],
      [{ ...good, certificate_pem: 'not a certificate' }, '/certificate_pem', 'invalid_certificate'],
      [
        { ...good, private_key_pem: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' },
        '/private_key_pem',
        'invalid_key',
      ],
    ];
    for (const [body, pointer, code] of cases) {
      const r = await put(body);
      expect(r.status, `${code}: ${r.text}`).toBe(422);
      expect(r.body.errors, code).toContainEqual(expect.objectContaining({ pointer, code }));
    }
    const missing = await put(await testCertificate(ca, [site.name]));
    expect(missing.body.errors[0].detail).toContain(`www.${site.name}`);
    expect((await put({ certificate_pem: good.certificate_pem })).status).toBe(422);
    const after = await get(t, site.id);
    expect(after.tls).toEqual(before.tls);
    expect(after.version).toBe(before.version);
  });

  it('a valid upload is served: mode custom, issuer custom, chain kept, the key never returned; a wildcard covers one label', async () => {
    const site = await newSite(t, w.accountA.id);
    await settled(t, site.id);
    const ca = await testAuthority();
    const cert = await testCertificate(ca, [site.name, `*.${site.name}`]);
    const r = await t.request('PUT', `/v1/sites/${site.id}/certificate`, { body: { ...cert, chain_pem: ca.certificate_pem } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ issuer: 'custom', names: [site.name, `*.${site.name}`], chain_pem: ca.certificate_pem });
    expect(r.text).not.toMatch(/PRIVATE KEY/);
    const s = await eventually(async () => {
      const x = await get(t, site.id);
      return x.sync_state === 'in_sync' && x.tls.issuer === 'custom' ? x : null;
    });
    expect(s.tls).toMatchObject({ mode: 'custom', status: 'active', renew_after: null });
    const served = readFileSync(path.join(webDir(t), 'certs', `${site.id}.crt`), 'utf8');
    expect(served).toBe(cert.certificate_pem + ca.certificate_pem);
    // custom is set by an upload only.
    const other = await newSite(t, w.accountA.id);
    const patch = await t.request('PATCH', `/v1/sites/${other.id}`, { body: { tls: { mode: 'custom' } } });
    expect(patch.status).toBe(422);
    expect(patch.body.errors[0]).toMatchObject({ pointer: '/tls/mode', code: 'certificate_required' });
  });
});

describe('renewal, expiry notices and failures', () => {
  let r: TestApp;
  let account: { id: string };
  beforeAll(async () => {
    r = await createTestApp({ env: { BERTH_CERTIFICATE_SCHEDULER_MS: '50' } });
    account = await createAccount(r, (await createPlan(r)).id);
  });
  afterAll(async () => r.close());

  it('renews once two thirds of the lifetime has passed: a new certificate is served, once', async () => {
    const site = await newSite(r, account.id);
    const first = (await settled(r, site.id)).tls;
    r.clock.advance(Date.parse(first.renew_after) - r.clock.now().getTime() + 60_000);
    const renewed = await eventually(async () => {
      const s = await get(r, site.id);
      return s.tls.not_before !== first.not_before && s.sync_state === 'in_sync' ? s : null;
    });
    expect(renewed.tls).toMatchObject({ status: 'active', issuer: 'internal' });
    expect(Date.parse(renewed.tls.renew_after)).toBeGreaterThan(r.clock.now().getTime());
    const types = await eventTypes(r, site.id);
    expect(types.filter((x) => x === 'site.certificate.renewed')).toHaveLength(1);
    const ops = (await r.get(`/v1/operations?resource_id=${site.id}&type=site.certificate.issue`)).body.data;
    expect(ops).toHaveLength(2);
  });

  it('announces a certificate 14 days before it ends, once', async () => {
    const site = await newSite(r, account.id);
    await settled(r, site.id);
    const ca = await testAuthority(r.clock.now());
    const cert = await testCertificate(ca, [site.name, `www.${site.name}`], { now: r.clock.now(), days: 10 });
    expect((await r.request('PUT', `/v1/sites/${site.id}/certificate`, { body: cert })).status).toBe(200);
    await eventually(async () => (await eventTypes(r, site.id)).includes('site.certificate.expiring'));
    r.clock.advance(60_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await eventTypes(r, site.id)).filter((x) => x === 'site.certificate.expiring')).toHaveLength(1);
  });

  it('an issuer that fails: status failed with its detail, the site still served over HTTP, a backoff before the next try', async () => {
    const failing = await createTestApp({ env: { BERTH_ACME_DIRECTORY_URL: 'https://127.0.0.1:1/directory' } });
    try {
      const acct = await createAccount(failing, (await createPlan(failing)).id);
      const site = await newSite(failing, acct.id);
      const s = await settled(failing, site.id);
      expect(s.status).toBe('active');
      expect(s.tls).toMatchObject({ mode: 'auto', status: 'failed', error: { code: 'certificate_failed' } });
      expect(s.tls.error.detail).toBe('ACME server https://127.0.0.1:1/directory: no answer');
      expect(serverBlock(failing, site.id)).not.toContain('ssl');
      expect(await eventTypes(failing, site.id)).toContain('site.certificate.failed');
      const row = await failing.db.query<{ retry_at: Date; failures: number }>(
        'SELECT retry_at, failures FROM certificates WHERE site_id = $1',
        [site.id],
      );
      expect(row.rows[0]!.failures).toBe(1);
      expect(new Date(row.rows[0]!.retry_at).getTime() - failing.clock.now().getTime()).toBeGreaterThanOrEqual(4 * 60_000);
      const op = (await failing.get(`/v1/operations?resource_id=${site.id}&type=site.certificate.issue`)).body.data[0];
      expect(op).toMatchObject({ status: 'failed', error: { code: 'certificate_failed' } });
    } finally {
      await failing.close();
    }
  });
});
