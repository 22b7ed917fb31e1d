import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MailDriver } from '../../src/provisioning/driver.js';
import { EmbeddedMailDriver } from '../../src/provisioning/drivers/embedded-mail.js';
import { createTestApp, eventually } from '../helpers/app.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

const PASSWORD = 'correct horse battery staple';

describe('a failing mail driver', () => {
  it('leaves the write accepted, shows sync_state error with the reason, retries, and converges', async () => {
    let down = true;
    const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-flaky-mail-'));
    const real = new EmbeddedMailDriver(dataDir);
    const flaky: MailDriver = {
      name: 'flaky',
      async applyDomain(domain) {
        if (down) throw new Error('mail server unreachable');
        await real.applyDomain(domain);
      },
      removeDomain: (name, root, options) => real.removeDomain(name, root, options),
      useCertificate: (certificatePem, keyPem) => real.useCertificate(certificatePem, keyPem),
    };
    const f = await createTestApp({ dataDir, deps: { mailDriver: flaky } });
    try {
      const acc = await createAccount(f, (await createPlan(f)).id);
      await f.post('/v1/domains', { account_id: acc.id, name: 'flaky-mail.io', mail_enabled: true });
      const box = await f.post('/v1/emails', { address: 'me@flaky-mail.io', password: PASSWORD, quota_mb: 10 });
      expect(box.status).toBe(201);
      const failed = await eventually(async () => {
        const r = await f.get(`/v1/emails/${box.body.id}`);
        return r.body.sync_state === 'error' ? r.body : null;
      });
      expect(failed.sync_error).toBe('mail server unreachable');
      down = false;
      await eventually(async () => (await f.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync', 60_000);
      expect(readFileSync(path.join(dataDir, 'rendered', 'mail', 'passwd'), 'utf8')).toContain('me@flaky-mail.io:{ARGON2ID}');
    } finally {
      await f.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('account termination', () => {
  it("withdraws the account's mail domains and removes its mailboxes", async () => {
    const f = await createTestApp();
    try {
      const acc = await createAccount(f, (await createPlan(f)).id);
      await f.post('/v1/domains', { account_id: acc.id, name: 'leaving.io', mail_enabled: true });
      const box = await f.post('/v1/emails', { address: 'bye@leaving.io', password: PASSWORD, quota_mb: 10 });
      await eventually(async () => (await f.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync');
      const mailDir = path.join(f.dataDir, 'rendered', 'mail');
      expect(readFileSync(path.join(mailDir, 'virtual_mailbox_domains'), 'utf8')).toBe('leaving.io OK\n');
      expect((await f.request('DELETE', `/v1/accounts/${acc.id}`)).status).toBe(202);
      await eventually(async () => (await f.get(`/v1/accounts/${acc.id}`)).status === 404);
      // The joined files are rewritten after the deletion is answered, side by side: wait for all of them.
      const joined = (file: string) => readFileSync(path.join(mailDir, file), 'utf8');
      await eventually(async () => ['virtual_mailbox_domains', 'virtual_alias_maps', 'passwd'].every((f) => joined(f) === ''));
      expect(existsSync(path.join(f.dataDir, 'accounts', acc.id))).toBe(false);
      expect((await f.get(`/v1/emails/${box.body.id}`)).status).toBe(404);
    } finally {
      await f.close();
    }
  }, 180_000);
});
