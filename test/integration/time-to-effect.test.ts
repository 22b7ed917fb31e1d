import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { daemonApp, daemonEnv, dig, httpGet, imapLogin, NO_DAEMONS } from './daemons.js';

const ROUNDS = 5;

/** Milliseconds from `started` until check() holds, looking every few milliseconds. */
async function effectAfter(started: number, check: () => Promise<boolean>): Promise<number> {
  while (!(await check())) {
    if (performance.now() - started > 60_000) throw new Error('no effect within 60 s');
    await new Promise((r) => setTimeout(r, 5));
  }
  return performance.now() - started;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

const report = (what: string, xs: number[]) =>
  console.log(`${what}: ${xs.map((x) => x.toFixed(0)).join(', ')} ms (median ${median(xs).toFixed(0)} ms)`);

/**
 * Time to effect on the real daemons: from the API write to what dig, HTTP and IMAP see. The job
 * starts when the write commits; what is printed beyond the embedded drivers' few milliseconds
 * is the daemons' own time (PowerDNS's API, nginx -t and reload, the mail tables and postfix reload).
 */
describe.skipIf(!daemonEnv)(
  `time to effect on real daemons (${daemonEnv ? 'PowerDNS, nginx, Dovecot, Postfix' : NO_DAEMONS})`,
  () => {
    let t: TestApp;
    let accountId: string;
    const name = `effect-${Date.now().toString(36)}.com`;
    beforeAll(async () => {
      t = await daemonApp();
      accountId = (await createAccountOnNewPlan(t)).id;
      await t.post('/v1/domains', { account_id: accountId, name, mail_enabled: true });
    });
    afterAll(async () => t?.close());

    it('a DNS record answers dig, a mailbox logs in over IMAP, a deployment answers HTTP', async () => {
      const dns: number[] = [];
      const mail: number[] = [];
      const applied: number[] = [];
      const web: number[] = [];
      const site = (await t.post('/v1/sites', { account_id: accountId, hostname: `www.${name}` })).body;
      await effectAfter(performance.now(), async () => (await t.get(`/v1/sites/${site.id}`)).body.status === 'active');
      for (let i = 0; i < ROUNDS; i++) {
        let started = performance.now();
        const ip = `192.0.2.${i + 10}`;
        expect((await t.post(`/v1/domains/${name}/records`, { name: `e${i}`, type: 'A', content: ip })).status).toBe(201);
        dns.push(await effectAfter(started, async () => (await dig(`e${i}.${name}`, 'A')).includes(ip)));

        started = performance.now();
        const password = `the effect password ${i}, long`;
        const box = await t.post('/v1/emails', { address: `m${i}@${name}`, password });
        expect(box.status).toBe(201);
        applied.push(
          await effectAfter(started, async () => (await t.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync'),
        );
        // Tried once in sync: logins tried from the write on (one every 10 ms) were refused until
        // the mailbox existed and slowed the next ones for seconds (0.3–7.5 s to the first that
        // worked), a wait no client that waited for the API would meet.
        mail.push(await effectAfter(started, () => imapLogin(`m${i}@${name}`, password)));

        started = performance.now();
        const body = `release ${i}`;
        const dep = await t.request('POST', `/v1/sites/${site.id}/deployments`, {
          raw: tarGz([{ path: 'index.html', content: body }]),
          headers: { 'content-type': 'application/gzip' },
        });
        expect(dep.status).toBe(202);
        web.push(await effectAfter(started, async () => (await httpGet(`www.${name}`)).body === body));
      }
      report('DNS record → dig answers (PowerDNS)', dns);
      report('mailbox → in_sync (users.dict and texthash: tables, postfix reload, auth cache flushed)', applied);
      report('mailbox → IMAP login (Dovecot)', mail);
      report('deployment → HTTP answers (nginx)', web);
      console.log(`mailbox login ÷ DNS, medians: ${(median(mail) / median(dns)).toFixed(2)} (goal ≤ 1.5)`);
    }, 300_000);
  },
);
