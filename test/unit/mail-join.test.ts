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

  it("joins from what the process rendered, not by reading every domain's files again", async () => {
    const driver = new EmbeddedMailDriver(dataDir);
    await driver.applyDomain(spec('d.test'));
    // A file changed behind the driver's back is not read again by the next domain's join.
    writeFileSync(path.join(dataDir, 'rendered', 'mail', 'domains', 'd.test', 'users.dict'), 'stale\n');
    await driver.applyDomain(spec('e.test'));
    expect(users()).toEqual(['a.test', 'c.test', 'd.test', 'e.test']);
    expect(joined('users.dict')).not.toContain('stale');
  });
});
