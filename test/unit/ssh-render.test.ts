import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { parseSshdLogins, renderAuthorizedKeys, renderSshdDropIn, SshUnitSpec } from '../../src/provisioning/render/ssh.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/ssh', name), 'utf8');
const ED = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAfLsaq8dactENY8UaLxR+ZEtfi68kHFAewjONq2Ijms';
const spec: SshUnitSpec = {
  account_id: 'acc_01jd3x9v6ef8tb2q4w5n7k8m9p',
  username: 'alice',
  access: 'shell',
  keys: [
    { key: ED, allowed_from: [] },
    { key: 'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY=', allowed_from: ['192.0.2.0/24', '2001:db8::1'] },
  ],
};

describe('the sshd drop-in', () => {
  it('holds the Match blocks of both modes before the catch-all that accepts no key (golden file)', () => {
    expect(renderSshdDropIn({ keysDir: '/etc/ssh/berth/keys', chrootDir: '/etc/ssh/berth/chroot' })).toBe(fixture('berth.conf'));
  });

  it('refuses a path sshd would read otherwise', () => {
    expect(() => renderSshdDropIn({ keysDir: '/etc/ssh/berth keys', chrootDir: '/x' })).toThrow(/unsafe path/);
    expect(() => renderSshdDropIn({ keysDir: '/k', chrootDir: '/x\nForceCommand /bin/sh' })).toThrow(/unsafe path/);
  });
});

describe('key files', () => {
  it('restrict every key, give a shell its TTY, and limit a key to its addresses (golden file)', () => {
    expect(renderAuthorizedKeys(spec)).toBe(fixture('berth-alice'));
    expect(renderAuthorizedKeys({ ...spec, access: 'sftp' })).not.toContain('pty');
  });

  it('do not exist while access is disabled or there is no key', () => {
    expect(renderAuthorizedKeys({ ...spec, access: 'disabled' })).toBeNull();
    expect(renderAuthorizedKeys({ ...spec, keys: [] })).toBeNull();
  });

  it('take nothing but a bare key line and addresses from a unit (an agent checks each unit against the schema)', () => {
    const withKey = (key: string, allowed_from: string[] = []) =>
      Value.Check(SshUnitSpec, { ...spec, keys: [{ key, allowed_from }] });
    expect(withKey(ED)).toBe(true);
    expect(withKey(`command="sh" ${ED}`)).toBe(false);
    expect(withKey(`${ED} comment`)).toBe(false);
    expect(withKey(`${ED}\nssh-ed25519 AAAA`)).toBe(false);
    expect(withKey(ED, ['10.0.0.0/8",command="sh'])).toBe(false);
  });
});

describe("sshd's log", () => {
  it('yields the key logins it accepted, from a file of its own or from syslog, and nothing else', () => {
    const fp = 'SHA256:gC3eoE0TFDpQ34BW2Z5SHZBoby0J59YYNVOyqMYzOtM';
    const text = [
      `Accepted key ED25519 ${fp} found at /etc/ssh/berth/keys/berth-alice:2`,
      `Accepted publickey for berth-alice from 127.0.0.1 port 51610 ssh2: ED25519 ${fp}`,
      `Nov 28 09:32:01 web1 sshd[812]: Accepted publickey for berth-bob from 2001:db8::7 port 40022 ssh2: RSA ${fp}`,
      `Failed publickey for berth-carol from 127.0.0.1 port 51642 ssh2: ED25519 ${fp}`,
      `Accepted password for root from 127.0.0.1 port 51650 ssh2`,
      `Accepted publickey for berth-dave from 127.0.0.1 port 1 ssh2: ED25519 ${fp}; rm -rf /`,
      '',
    ].join('\n');
    expect(parseSshdLogins(text, '2026-11-28T10:00:00.000Z')).toEqual([
      { user: 'berth-alice', fingerprint_sha256: fp, at: '2026-11-28T10:00:00.000Z' },
      { user: 'berth-bob', fingerprint_sha256: fp, at: '2026-11-28T10:00:00.000Z' },
    ]);
  });
});
