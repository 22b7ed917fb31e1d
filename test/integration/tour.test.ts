import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, eventually } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { daemonApp, daemonEnv, dig, httpGet, imapLogin, NO_DAEMONS, smtp } from './daemons.js';

const PASSWORD = 'the tour password, long enough';

/** What a customer sees from outside, with dig, curl and an IMAP client, through a whole account life. */
describe.skipIf(!daemonEnv)(`full tour on real daemons (${daemonEnv ? 'PowerDNS, nginx, Dovecot, Postfix' : NO_DAEMONS})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await daemonApp();
  });
  afterAll(async () => t?.close());

  it('create account, domain, mailbox and site; deploy; suspend; delete: each visible from outside', async () => {
    const account = await createAccountOnNewPlan(t);
    const name = `tour-${Date.now().toString(36)}.com`;
    const domain = (await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).body;
    const box = (await t.post('/v1/emails', { address: `hello@${name}`, password: PASSWORD, quota_mb: 10 })).body;
    const site = (await t.post('/v1/sites', { account_id: account.id, hostname: `www.${name}`, aliases: [name] })).body;
    await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).body.status === 'active');
    const dep = await t.request('POST', `/v1/sites/${site.id}/deployments`, {
      raw: tarGz([{ path: 'index.html', content: 'welcome aboard' }]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(dep.status, dep.text).toBe(202);

    // DNS: the zone with its mail records; the web: both names; mail: login and delivery.
    await eventually(async () => (await dig(name, 'MX')).length > 0);
    await eventually(async () => (await httpGet(`www.${name}`)).body === 'welcome aboard');
    await eventually(async () => (await httpGet(name)).body === 'welcome aboard');
    await eventually(async () => (await t.get(`/v1/emails/${box.id}`)).body.sync_state === 'in_sync');
    expect(await imapLogin(`hello@${name}`, PASSWORD)).toBe(true);
    expect((await smtp(['EHLO c.example', 'MAIL FROM:<a@example.org>', `RCPT TO:<hello@${name}>`])).at(-1)?.code).toBe(250);

    // Suspending the account: the site answers 503, the mailbox refuses logins, mail still arrives, DNS still answers.
    expect((await t.post(`/v1/accounts/${account.id}/suspend`, { reason: 'unpaid' })).status).toBe(200);
    await eventually(async () => (await httpGet(`www.${name}`)).status === 503);
    await eventually(async () => !(await imapLogin(`hello@${name}`, PASSWORD)));
    expect((await smtp(['EHLO c.example', 'MAIL FROM:<a@example.org>', `RCPT TO:<hello@${name}>`])).at(-1)?.code).toBe(250);
    expect((await dig(name, 'SOA')).length).toBe(1);
    expect((await t.post(`/v1/accounts/${account.id}/unsuspend`, {})).status).toBe(200);
    await eventually(async () => (await httpGet(`www.${name}`)).status === 200);

    // Deleting everything: nothing answers any more.
    expect((await t.request('DELETE', `/v1/sites/${site.id}`)).status).toBe(202);
    expect((await t.request('DELETE', `/v1/emails/${box.id}`)).status).toBeLessThan(300);
    expect((await t.request('DELETE', `/v1/domains/${domain.id}`)).status).toBeLessThan(300);
    await eventually(async () => (await httpGet(`www.${name}`)).status === 404);
    await eventually(async () => (await dig(name, 'SOA')).length === 0);
    await eventually(
      async () => (await smtp(['EHLO c.example', 'MAIL FROM:<a@example.org>', `RCPT TO:<hello@${name}>`])).at(-1)?.code !== 250,
    );
    expect(await imapLogin(`hello@${name}`, PASSWORD)).toBe(false);
  }, 120_000);
});
