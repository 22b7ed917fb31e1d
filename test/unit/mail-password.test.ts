import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAIL_HASH_COST,
  generateMailPassword,
  hashMailPassword,
  verifyMailPassword,
} from '../../src/lib/mail-password.js';

// The reference implementation's argon2id test vector (phc-winner-argon2, test.c): "password",
// salt "somesalt", t=2, m=64 MiB, p=1.
const REFERENCE = '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc';
const doveadm = spawnSync('doveadm', ['pw', '-l'], { encoding: 'utf8' });
const hasDoveadm = doveadm.status === 0 && doveadm.stdout.includes('ARGON2ID');

describe('mailbox password hashes', () => {
  it('match the argon2id reference vector, in the m,t,p order libsodium (Dovecot) reads', async () => {
    const hash = await hashMailPassword('password', { memoryKib: 65536, timeCost: 2 }, Buffer.from('somesalt'));
    expect(hash).toBe(`{ARGON2ID}${REFERENCE}`);
  });

  it('verify the right password only', async () => {
    expect(await verifyMailPassword(`{ARGON2ID}${REFERENCE}`, 'password')).toBe(true);
    expect(await verifyMailPassword(`{ARGON2ID}${REFERENCE}`, 'Password')).toBe(false);
    expect(await verifyMailPassword('{SHA512-CRYPT}$6$x$y', 'password')).toBe(false);
  });

  it('use a fresh salt each time and the configured cost', async () => {
    const cost = { memoryKib: 2048, timeCost: 3 };
    const a = await hashMailPassword('same password here', cost);
    const b = await hashMailPassword('same password here', cost);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^\{ARGON2ID\}\$argon2id\$v=19\$m=2048,t=3,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(await verifyMailPassword(a, 'same password here')).toBe(true);
    expect(DEFAULT_MAIL_HASH_COST).toEqual({ memoryKib: 19456, timeCost: 2 });
  });

  it('do not block the event loop while hashing', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await Promise.all([1, 2, 3, 4].map(() => hashMailPassword('a long enough password', { memoryKib: 65536, timeCost: 3 })));
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(5);
  });

  it('generate 24-character passwords without look-alike characters', () => {
    const seen = new Set(Array.from({ length: 50 }, generateMailPassword));
    expect(seen.size).toBe(50);
    for (const p of seen) expect(p).toMatch(/^[a-km-zA-HJ-NP-Z2-9]{24}$/);
  });

  it.skipIf(!hasDoveadm)('are accepted by `doveadm pw -t` (needs dovecot-core)', async () => {
    const hash = await hashMailPassword('checked by dovecot', DEFAULT_MAIL_HASH_COST);
    const ok = spawnSync('doveadm', ['pw', '-t', hash, '-p', 'checked by dovecot'], { encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('(verified)');
    const wrong = spawnSync('doveadm', ['pw', '-t', hash, '-p', 'not the password'], { encoding: 'utf8' });
    expect(wrong.status).not.toBe(0);
  });
});
