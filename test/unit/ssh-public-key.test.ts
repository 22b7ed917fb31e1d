import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSshPublicKey, SshKeyRefused } from '../../src/lib/ssh-public-key.js';

/**
 * Public keys as OpenSSH makes and reads them: each accepted type made by ssh-keygen, its
 * fingerprint and size compared with what `ssh-keygen -lf -E sha256` prints, and a test per
 * rule that refuses one.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'berth-ssh-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function keygen(...args: string[]): string {
  const file = path.join(dir, `k${n++}`);
  execFileSync('ssh-keygen', ['-q', '-N', '', '-C', 'me@laptop', '-f', file, ...args]);
  return readFileSync(`${file}.pub`, 'utf8');
}
/** `ssh-keygen -lf` of a public key line: bits and fingerprint. */
function listed(line: string): { bits: number; fingerprint: string } {
  const file = path.join(dir, `l${n++}.pub`);
  writeFileSync(file, line);
  const [bits, fingerprint] = execFileSync('ssh-keygen', ['-lf', file, '-E', 'sha256'], { encoding: 'utf8' }).split(' ');
  return { bits: Number(bits), fingerprint: fingerprint as string };
}

const wire = (...parts: (string | Buffer)[]) =>
  Buffer.concat(
    parts.flatMap((p) => {
      const b = typeof p === 'string' ? Buffer.from(p) : p;
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length);
      return [len, b];
    }),
  );
const line = (type: string, blob: Buffer, comment = '') => `${type} ${blob.toString('base64')}${comment ? ` ${comment}` : ''}`;
/** The parts of a real key's blob, to rebuild it with one thing wrong. */
const partsOf = (keyLine: string) => {
  const blob = Buffer.from(keyLine.split(' ')[1] as string, 'base64');
  const parts: Buffer[] = [];
  for (let at = 0; at < blob.length;) {
    const length = blob.readUInt32BE(at);
    parts.push(blob.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return parts;
};
const refusal = (keyLine: string) => {
  try {
    parseSshPublicKey(keyLine);
  } catch (err) {
    if (err instanceof SshKeyRefused) return err.code;
    throw err;
  }
  return 'accepted';
};

const sshKeygen = (() => {
  try {
    execFileSync('ssh-keygen', ['-?'], { stdio: 'ignore' });
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  return true;
})();

describe.skipIf(!sshKeygen)(
  `SSH public keys (${sshKeygen ? 'compared with ssh-keygen' : 'skipped: ssh-keygen is not installed'})`,
  () => {
    it.each([
      ['ssh-ed25519', ['-t', 'ed25519'], 256],
      ['ecdsa-sha2-nistp256', ['-t', 'ecdsa', '-b', '256'], 256],
      ['ecdsa-sha2-nistp384', ['-t', 'ecdsa', '-b', '384'], 384],
      ['ecdsa-sha2-nistp521', ['-t', 'ecdsa', '-b', '521'], 521],
      ['ssh-rsa', ['-t', 'rsa', '-b', '3072'], 3072],
    ])('accepts %s with the fingerprint and size ssh-keygen prints', (type, args, bits) => {
      const keyLine = keygen(...args);
      const key = parseSshPublicKey(keyLine);
      expect(key).toMatchObject({ type, bits, comment: 'me@laptop', key: keyLine.split(' ').slice(0, 2).join(' ') });
      expect(listed(keyLine)).toEqual({ bits, fingerprint: key.fingerprint_sha256 });
    });

    it('accepts security keys (sk-ssh-ed25519, sk-ecdsa-sha2-nistp256) and fingerprints them as ssh-keygen does', () => {
      const ed = partsOf(keygen('-t', 'ed25519'));
      const sk = line('sk-ssh-ed25519@openssh.com', wire('sk-ssh-ed25519@openssh.com', ed[1] as Buffer, 'ssh:'), 'yubikey');
      expect(parseSshPublicKey(sk)).toMatchObject({ bits: 256, fingerprint_sha256: listed(sk).fingerprint, comment: 'yubikey' });
      const ec = partsOf(keygen('-t', 'ecdsa', '-b', '256'));
      const skEc = line(
        'sk-ecdsa-sha2-nistp256@openssh.com',
        wire('sk-ecdsa-sha2-nistp256@openssh.com', 'nistp256', ec[2] as Buffer, 'ssh:'),
      );
      expect(parseSshPublicKey(skEc)).toMatchObject({ bits: 256, fingerprint_sha256: listed(skEc).fingerprint });
      // One made for another application than SSH is not a login key.
      expect(refusal(line('sk-ssh-ed25519@openssh.com', wire('sk-ssh-ed25519@openssh.com', ed[1] as Buffer, 'webauthn:x')))).toBe(
        'invalid_public_key',
      );
    });

    it('refuses DSA and other types as key_type_not_allowed', () => {
      expect(refusal(keygen('-t', 'dsa'))).toBe('key_type_not_allowed');
      expect(refusal('ssh-xmss@openssh.com AAAA')).toBe('key_type_not_allowed');
    });

    it('refuses RSA under 3072 bits as key_too_small', () => {
      expect(refusal(keygen('-t', 'rsa', '-b', '2048'))).toBe('key_too_small');
    });

    it('refuses a blob whose inner type is not the outer one', () => {
      const ed = keygen('-t', 'ed25519');
      expect(refusal(`ssh-rsa ${ed.split(' ')[1]}`)).toBe('invalid_public_key');
      expect(refusal(line('ecdsa-sha2-nistp256', wire('ssh-ed25519', partsOf(ed)[1] as Buffer)))).toBe('invalid_public_key');
    });

    it('refuses an ECDSA key whose curve is not its type’s, or whose point is off the curve', () => {
      const p256 = partsOf(keygen('-t', 'ecdsa', '-b', '256'));
      expect(refusal(line('ecdsa-sha2-nistp384', wire('ecdsa-sha2-nistp384', 'nistp256', p256[2] as Buffer)))).toBe(
        'invalid_public_key',
      );
      expect(refusal(line('ecdsa-sha2-nistp384', wire('ecdsa-sha2-nistp384', 'nistp384', p256[2] as Buffer)))).toBe(
        'invalid_public_key',
      );
      const off = Buffer.from(p256[2] as Buffer);
      off[40] = (off[40] as number) ^ 1;
      expect(refusal(line('ecdsa-sha2-nistp256', wire('ecdsa-sha2-nistp256', 'nistp256', off)))).toBe('invalid_public_key');
    });

    it('refuses an options prefix, control characters, a second line, trailing bytes, bad base64 and more than 16 KiB', () => {
      const ed = keygen('-t', 'ed25519').trim();
      expect(refusal(ed)).toBe('accepted');
      expect(refusal(`command="/bin/sh" ${ed}`)).toBe('invalid_public_key');
      expect(refusal(`from="10.0.0.1" ${ed}`)).toBe('invalid_public_key');
      expect(refusal(`${ed} me\u0007`)).toBe('invalid_public_key');
      expect(refusal(`${ed}\n${ed}`)).toBe('invalid_public_key');
      expect(refusal(`${ed} ${'x'.repeat(16 * 1024)}`)).toBe('invalid_public_key');
      expect(refusal(line('ssh-ed25519', Buffer.concat([wire('ssh-ed25519', partsOf(ed)[1] as Buffer), Buffer.from([0])])))).toBe(
        'invalid_public_key',
      );
      expect(refusal('ssh-ed25519 AAAA$$')).toBe('invalid_public_key');
      expect(refusal('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5')).toBe('invalid_public_key');
      expect(refusal('')).toBe('invalid_public_key');
    });
  },
);
