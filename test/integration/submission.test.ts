import { promises as dns } from 'node:dns';
import { authenticate } from 'mailauth';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type TestApp } from '../helpers/app.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { daemonApp, daemonEnv, inbox, NO_DAEMONS } from './daemons.js';

/**
 * Submission on real daemons: a mailbox submits with STARTTLS and AUTH (Postfix, Dovecot SASL),
 * OpenDKIM signs with the domain's key, and the signature verifies with mailauth against the
 * zone Berth serves (PowerDNS), before and after a rotation.
 */
const submission = daemonEnv?.BERTH_IT_SUBMISSION;
const PASSWORD = 'a long enough passphrase';

describe.skipIf(!submission)(`submission and DKIM (${submission ? 'Postfix, OpenDKIM' : NO_DAEMONS})`, () => {
  let t: TestApp;
  let domain: string;
  const [host, port] = (submission ?? ':').split(':') as [string, string];
  // Collected (not run) when the daemons are absent: only set up what exists.
  const resolver = new dns.Resolver();
  if (daemonEnv?.BERTH_IT_DNS) resolver.setServers([daemonEnv.BERTH_IT_DNS]);
  const mailHost = daemonEnv?.BERTH_MAIL_HOST ?? '';
  // STARTTLS is checked for real: the mail host's name, signed by the root of Berth's internal CA.
  let root = '';
  const transport = (user?: string) =>
    nodemailer.createTransport({
      host,
      port: Number(port),
      secure: false,
      requireTLS: true,
      tls: { ca: root, servername: mailHost, rejectUnauthorized: true },
      ...(user ? { auth: { user, pass: PASSWORD } } : {}),
    });

  /** The raw message with `subject` in the mailbox, once delivered. */
  const received = (address: string, subject: string) =>
    eventually(async () => (await inbox(address, PASSWORD))?.find((m) => m.subject === subject)?.source, 30_000);
  const dkimOf = async (raw: Buffer) =>
    (
      await authenticate(raw, {
        ip: '127.0.0.1',
        helo: 'client.example',
        mta: 'mx.berth.test',
        resolver: (name: string, rr: string) => resolver.resolve(name, rr as 'TXT'),
      })
    ).dkim.results;

  beforeAll(async () => {
    t = await daemonApp();
    root = (await t.get('/v1/certificate-authorities/internal')).body.certificate_pem;
    const account = await createAccountOnNewPlan(t);
    domain = `send-${Date.now().toString(36)}.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name: domain, mail_enabled: true })).status).toBe(201);
    for (const local of ['alice', 'bob']) {
      const r = await t.post('/v1/emails', { address: `${local}@${domain}`, password: PASSWORD, quota_mb: 10 });
      expect(r.status, r.text).toBe(201);
    }
    await t.post('/v1/email-forwarders', { address: `sales@${domain}`, destinations: [`alice@${domain}`] });
    await eventually(async () => {
      const [d, boxes] = [(await t.get(`/v1/domains/${domain}`)).body, (await t.get(`/v1/emails?domain=${domain}`)).body.data];
      return d.sync_state === 'in_sync' && boxes.every((b: { sync_state: string }) => b.sync_state === 'in_sync');
    });
  });
  afterAll(async () => t?.close());

  it("the submission service presents the mail host's certificate from Berth's issuer", async () => {
    const server = await eventually(
      async () => (await t.get('/v1/mail-server')).body.certificate && (await t.get('/v1/mail-server')).body,
    );
    expect(server).toMatchObject({ host: mailHost, certificate: { issuer: 'internal', names: [mailHost] } });
    // Postfix's next smtpd process reads the new files: wait for the handshake that verifies.
    await eventually(
      () =>
        transport()
          .verify()
          .catch(() => false),
      30_000,
    );
    const wrongName = nodemailer.createTransport({
      host,
      port: Number(port),
      requireTLS: true,
      tls: { ca: root, servername: 'other.berth.test', rejectUnauthorized: true },
    });
    await expect(wrongName.verify()).rejects.toThrow(/altnames|does not match/i);
  });

  it('a message submitted with AUTH reaches another mailbox, signed by a key the zone publishes', async () => {
    const selector = (await t.get(`/v1/domains/${domain}/dkim`)).body.selector;
    const subject = `signed ${Date.now()}`;
    const sent = await transport(`alice@${domain}`).sendMail({
      from: `alice@${domain}`,
      to: `bob@${domain}`,
      subject,
      text: 'hello',
    });
    expect(sent.accepted).toEqual([`bob@${domain}`]);
    const raw = await received(`bob@${domain}`, subject);
    const results = await dkimOf(raw);
    expect(results[0]).toMatchObject({ signingDomain: domain, selector, status: { result: 'pass' } });

    // Rotated: the old selector stays published, so the message still verifies; new mail uses the new key.
    const rotated = (await t.post(`/v1/domains/${domain}/dkim/rotate`)).body;
    await eventually(async () => (await t.get(`/v1/domains/${domain}`)).body.sync_state === 'in_sync');
    expect((await dkimOf(raw))[0]).toMatchObject({ selector, status: { result: 'pass' } });
    await eventually(async () =>
      (await t.get(`/v1/emails?domain=${domain}`)).body.data.every((b: { sync_state: string }) => b.sync_state === 'in_sync'),
    );
    const later = `after rotation ${Date.now()}`;
    await transport(`alice@${domain}`).sendMail({ from: `sales@${domain}`, to: `bob@${domain}`, subject: later, text: 'again' });
    const second = await dkimOf(await received(`bob@${domain}`, later));
    expect(second[0]).toMatchObject({ selector: rotated.selector, status: { result: 'pass' } });
  });

  it('refuses a sender the login does not own, and relaying without AUTH', async () => {
    await expect(
      transport(`bob@${domain}`).sendMail({ from: `alice@${domain}`, to: `bob@${domain}`, subject: 'forged', text: 'x' }),
    ).rejects.toThrow(/Sender address rejected/);
    await expect(
      transport(`bob@${domain}`).sendMail({ from: `sales@${domain}`, to: `bob@${domain}`, subject: 'not his', text: 'x' }),
    ).rejects.toThrow(/Sender address rejected/);
    await expect(
      transport().sendMail({ from: `alice@${domain}`, to: 'someone@example.net', subject: 'relay', text: 'x' }),
    ).rejects.toThrow(/(Relay access denied|Authentication required|5\.7\.1)/i);
  });

  it('an autoresponder (Sieve vacation) answers only inside its window, and a sender once however many messages it sends', async () => {
    const bob = (await t.get(`/v1/emails?domain=${domain}&q=bob`)).body.data[0];
    const alice = transport(`alice@${domain}`);
    const set = async (autoresponder: Record<string, unknown>) => {
      const r = await t.request('PATCH', `/v1/emails/${bob.id}`, { body: { autoresponder } });
      expect(r.status, r.text).toBe(200);
      await eventually(async () => (await t.get(`/v1/emails/${bob.id}`)).body.sync_state === 'in_sync');
    };
    /** Replies to alice so far, once a marker bob sends after `subjects` has arrived (replies are queued before it). */
    const repliesAfter = async (...subjects: string[]) => {
      for (const subject of subjects) await alice.sendMail({ from: `alice@${domain}`, to: `bob@${domain}`, subject, text: 'hi' });
      await received(`bob@${domain}`, subjects.at(-1) as string);
      const marker = `marker ${subjects.join(' ')}`;
      await transport(`bob@${domain}`).sendMail({ from: `bob@${domain}`, to: `alice@${domain}`, subject: marker, text: '.' });
      await received(`alice@${domain}`, marker);
      return (await inbox(`alice@${domain}`, PASSWORD))?.filter((m) => m.subject === 'Away this week').length ?? 0;
    };
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    await set({ enabled: true, subject: 'Away this week', body: 'I am away.', starts_at: tomorrow });
    expect(await repliesAfter('too early')).toBe(0);
    await set({ starts_at: null });
    expect(await eventually(async () => (await repliesAfter('ping 1', 'ping 2')) || null, 30_000)).toBe(1);
  });
});
