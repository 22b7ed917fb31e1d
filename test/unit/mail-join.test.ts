import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedMailDriver } from '../../src/provisioning/drivers/embedded-mail.js';
import type { MailDomainSpec } from '../../src/provisioning/render/mail.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-mail-join-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const HASH = '{ARGON2ID}$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$0123456789abcdefghijklmnopqrstuvwxyzABCDE';
const spec = (name: string): MailDomainSpec => ({
  name,
  root: path.join(dataDir, 'accounts', 'acc_1', 'mail', name),
  mailboxes: [
    {
      id: `eml_${name.replace(/\W/g, '')}`,
      address: `info@${name}`,
      passwordHash: HASH,
      quotaMb: 10,
      loginAllowed: true,
      forwardTo: [],
      autoresponder: null,
    },
  ],
  forwarders: [],
  deferred: false,
  catchAll: null,
  dkim: null,
});
const joined = (map: string) => readFileSync(path.join(dataDir, 'rendered', 'mail', map), 'utf8');
const users = () => [...joined('users.dict').matchAll(/^shared\/passdb\/info@(.+)$/gm)].map((m) => m[1]);

describe("the mail driver's joined files", () => {
  it("hold every domain's lines, sorted, including those a process before this one rendered", async () => {
    await new EmbeddedMailDriver(dataDir).applyDomain(spec('b.test'));
    // A process started afresh: the domains rendered before it are read from the disk once.
    const driver = new EmbeddedMailDriver(dataDir);
    await driver.applyDomain(spec('a.test'));
    await driver.applyDomain(spec('c.test'));
    expect(users()).toEqual(['a.test', 'b.test', 'c.test']);
    expect(joined('virtual_mailbox_domains')).toBe('a.test OK\nb.test OK\nc.test OK\n');

    await driver.removeDomain('b.test', spec('b.test').root, { keepMaps: false });
    expect(users()).toEqual(['a.test', 'c.test']);
  });

  it("reads again only the domains whose files changed since it read them, another process's among them", async () => {
    const driver = new EmbeddedMailDriver(dataDir);
    await driver.applyDomain(spec('d.test'));
    await new Promise((r) => setTimeout(r, 100)); // older than a clock tick or two: its version is known
    await driver.applyDomain(spec('e.test'));
    // Changed in place, as no apply changes it (every apply renames a new file in): not read again.
    writeFileSync(path.join(dataDir, 'rendered', 'mail', 'domains', 'd.test', 'users.dict'), 'stale\n');
    await driver.applyDomain(spec('f.test'));
    expect(users()).toEqual(['a.test', 'c.test', 'd.test', 'e.test', 'f.test']);
    expect(joined('users.dict')).not.toContain('stale');

    // Another process applies d.test with a second mailbox, then removes f.test: this one's next join has both.
    const other = new EmbeddedMailDriver(dataDir);
    const more = spec('d.test');
    await other.applyDomain({
      ...more,
      mailboxes: [...more.mailboxes, { ...more.mailboxes[0]!, id: 'eml_dtest2', address: 'sales@d.test' }],
    });
    await other.removeDomain('f.test', spec('f.test').root, { keepMaps: false });
    await driver.applyDomain(spec('g.test'));
    expect(joined('users.dict')).toContain('shared/passdb/sales@d.test');
    expect(users()).toEqual(['a.test', 'c.test', 'd.test', 'e.test', 'g.test']);
  });
});
