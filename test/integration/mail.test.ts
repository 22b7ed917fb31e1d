import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, eventually } from '../helpers/app.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { daemonApp, daemonEnv, imapLogin, inbox, NO_DAEMONS, smtp } from './daemons.js';

const OLD = 'first password, long enough';
const NEW = 'second password, longer still';

describe.skipIf(!daemonEnv)(`Dovecot/Postfix driver (${daemonEnv ? 'BERTH_DRIVER_MAIL=dovecot-postfix' : NO_DAEMONS})`, () => {
  let t: TestApp;
  let domain: string;
  let box: { id: string; address: string };
  const email = async () => (await t.get(`/v1/emails/${box.id}`)).body;
  const patch = async (body: Record<string, unknown>) => {
    const r = await t.request('PATCH', `/v1/emails/${box.id}`, { body });
    expect(r.status, r.text).toBe(200);
    await eventually(async () => (await email()).sync_state === 'in_sync');
  };

  beforeAll(async () => {
    t = await daemonApp();
    const account = await createAccountOnNewPlan(t);
    domain = `mail-${Date.now().toString(36)}.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name: domain, mail_enabled: true })).status).toBe(201);
    const r = await t.post('/v1/emails', { address: `box@${domain}`, password: OLD, quota_mb: 1 });
    expect(r.status, r.text).toBe(201);
    box = r.body;
    await eventually(async () => (await email()).sync_state === 'in_sync');
  });
  afterAll(async () => t?.close());

  it('IMAP: the current password logs in, a wrong one does not', async () => {
    expect(await imapLogin(box.address, OLD)).toBe(true);
    expect(await imapLogin(box.address, 'not the password')).toBe(false);
  });

  it('IMAP: after a password change the old password fails and the new one works', async () => {
    await patch({ password: NEW });
    await eventually(async () => imapLogin(box.address, NEW), 30_000);
    expect(await imapLogin(box.address, OLD)).toBe(false);
  });

  it('IMAP: passwords changed back to back each log in at the first try once in_sync (no wait for a clock second)', async () => {
    // A change, its login, the next change within the same second or so: a passwd-file, looked
    // at no more than once a second, would still answer with the password before. (The old ones
    // are tried at the end: a failed login slows the next ones down.)
    const passwords = ['third password, long enough', 'fourth password, long enough', NEW];
    for (const password of passwords) {
      await patch({ password });
      expect(await imapLogin(box.address, password)).toBe(true);
    }
    expect(await imapLogin(box.address, passwords[0]!)).toBe(false);
  });

  it('IMAP: a suspended mailbox refuses even the right password; unsuspended it logs in again', async () => {
    // sync_state may still read in_sync from before the change: wait for what IMAP sees.
    await patch({ status: 'suspended' });
    await eventually(async () => !(await imapLogin(box.address, NEW)), 30_000);
    await patch({ status: 'active' });
    await eventually(async () => imapLogin(box.address, NEW), 30_000);
  });

  it("IMAP: a move's freeze ends the domain's sessions opened before it, and the next login is refused", async () => {
    const accountId = (await email()).account_id as string;
    const frozen = (at: string | null) =>
      t.db.query('UPDATE accounts SET move_id = $2, frozen_at = $3 WHERE id = $1', [accountId, at && 'mov_freeze_test', at]);
    let closed = false;
    try {
      const opened = await imapLogin(box.address, NEW, async (client) => {
        client.on('close', () => (closed = true));
        // Frozen as a move freezes it, then the domain's unit applied again (a change to it).
        await frozen(new Date().toISOString());
        await patch({ quota_mb: 2 });
        await eventually(async () => closed, 10_000);
      });
      expect(opened).toBe(true);
      expect(await imapLogin(box.address, NEW)).toBe(false);
    } finally {
      await frozen(null);
      await patch({ quota_mb: 1 });
    }
    expect(await imapLogin(box.address, NEW)).toBe(true);
  });

  it('SMTP: Postfix accepts RCPT TO for the mailbox and refuses an unknown address', async () => {
    const known = await smtp(['EHLO client.example', 'MAIL FROM:<sender@example.org>', `RCPT TO:<${box.address}>`]);
    expect(known.at(-1)?.code).toBe(250);
    const unknown = await smtp(['EHLO client.example', 'MAIL FROM:<sender@example.org>', `RCPT TO:<nobody@${domain}>`]);
    expect(unknown.at(-1)?.code).toBe(550);
    expect(unknown.at(-1)?.text).toMatch(/User unknown/i);
  });

  it('SMTP: a message lands in the Maildir, is seen over IMAP, and counts in usage_bytes', async () => {
    const before = (await email()).usage_bytes as number;
    const subject = `hello ${Date.now()}`;
    const sent = await smtp([
      'EHLO client.example',
      'MAIL FROM:<sender@example.org>',
      `RCPT TO:<${box.address}>`,
      'DATA',
      `From: sender@example.org\r\nTo: ${box.address}\r\nSubject: ${subject}\r\n\r\n${'x'.repeat(2000)}\r\n.`,
    ]);
    expect(sent.at(-1)?.code, JSON.stringify(sent)).toBe(250);
    await eventually(async () => ((await email()).usage_bytes as number) > before + 2000, 30_000);
    expect((await inbox(box.address, NEW))?.map((m) => m.subject)).toContain(subject);
  });

  it("quota: Dovecot refuses a message that would exceed the mailbox's quota", async () => {
    let refused: unknown = null;
    await imapLogin(box.address, NEW, async (client) => {
      const big = `Subject: too big\r\n\r\n${'y'.repeat(2 * 1024 * 1024)}\r\n`;
      refused = await client.append('INBOX', big).then(
        () => null,
        (err: { response?: string; serverResponseCode?: string }) => err,
      );
    });
    expect(refused).not.toBeNull();
    expect(JSON.stringify(refused)).toMatch(/quota/i);
  });

  it('catch-all: mail to an address that does not exist reaches the catch-all mailbox', async () => {
    const set = await t.request('PATCH', `/v1/domains/${domain}`, { body: { catch_all: box.address } });
    expect(set.status, set.text).toBe(200);
    await eventually(async () => (await email()).sync_state === 'in_sync');
    const subject = `to anyone ${Date.now()}`;
    const sent = await smtp([
      'EHLO client.example',
      'MAIL FROM:<sender@example.org>',
      `RCPT TO:<whoever-${Date.now()}@${domain}>`,
      'DATA',
      `From: sender@example.org\r\nTo: whoever@${domain}\r\nSubject: ${subject}\r\n\r\nfor the catch-all\r\n.`,
    ]);
    expect(sent.at(-1)?.code, JSON.stringify(sent)).toBe(250);
    await eventually(async () => (await inbox(box.address, NEW))?.some((m) => m.subject === subject), 30_000);
  });
});
