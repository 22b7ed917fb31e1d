import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalName, dsContent, dsOf } from '../../src/lib/dnssec/ds.js';
import { DNSSEC_ALGORITHMS, iscPrivateKey, newSigningKey } from '../../src/lib/dnssec/keys.js';
import { installed } from '../helpers/installed.js';

const bindTools = installed('dnssec-keygen');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('DS records computed by Berth', () => {
  it('match RFC 4509’s example: key tag 60485 and its SHA-256 digest', () => {
    const key = {
      flags: 256,
      algorithm: 5,
      publicKey:
        'AQOeiiR0GOMYkDshWoSKz9XzfwJr1AYtsmx3TGkJaNXVbfi/2pHm822aJ5iI9BMzNXxeYCmZDRD99WYwYqUSdjMmmAphXdvxegXd/M5+X7OrzKBaMbCVdFLUUh6DhweJBjEVv5f2wwjM9XzcnOf+EPbtG9DMBmADjFDc2w/rljwvFw==',
    };
    expect(dsContent(dsOf('dskey.example.com.', key))).toBe(
      '60485 5 2 D4B7D520E7BB5F0F67674A0CCEB1E3E0614B93C4F9E99B8383F6A1E4469DA50A',
    );
    // The owner name is canonical: its case and a trailing dot change nothing.
    expect(dsOf('DSKEY.Example.COM', key)).toEqual(dsOf('dskey.example.com.', key));
  });

  it('writes owner names as wire-format labels ending in the root', () => {
    expect(canonicalName('Www.Example.org.')).toEqual(Buffer.from('\x03www\x07example\x03org\x00', 'latin1'));
    expect(() => canonicalName(`${'a'.repeat(64)}.org`)).toThrow(/longer than 63/);
  });

  it.skipIf(!bindTools)(
    `agree with dnssec-dsfromkey for keys dnssec-keygen makes (${bindTools ? 'BIND' : 'skipped: BIND’s tools are not installed'})`,
    () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'berth-ds-'));
      dirs.push(dir);
      for (const [algorithm, flags] of [
        ['ECDSAP256SHA256', ['-f', 'KSK']],
        ['ED25519', ['-f', 'KSK']],
        ['RSASHA256', ['-b', '2048']],
      ] as const) {
        const base = execFileSync('dnssec-keygen', ['-q', '-K', dir, '-a', algorithm, ...flags, 'example.org'], {
          encoding: 'utf8',
        }).trim();
        const line = readFileSync(path.join(dir, `${base}.key`), 'utf8')
          .split('\n')
          .find((l) => l.includes(' DNSKEY ')) as string;
        const fields = line.split(/\s+/);
        const [keyFlags, , keyAlgorithm, ...key] = fields.slice(fields.indexOf('DNSKEY') + 1);
        const ours = dsOf('example.org', { flags: Number(keyFlags), algorithm: Number(keyAlgorithm), publicKey: key.join('') });
        const theirs = execFileSync('dnssec-dsfromkey', ['-2', path.join(dir, `${base}.key`)], { encoding: 'utf8' }).trim();
        expect(theirs).toBe(`example.org. IN DS ${dsContent(ours)}`);
      }
      expect(readdirSync(dir).length).toBe(6);
    },
  );
});

describe('signing keys made by Berth', () => {
  it.skipIf(!bindTools)(
    `sign a zone with dnssec-signzone, from the K files written from them, for each algorithm (${bindTools ? 'BIND' : 'skipped: BIND’s tools are not installed'})`,
    async () => {
      for (const algorithm of DNSSEC_ALGORITHMS) {
        const dir = mkdtempSync(path.join(tmpdir(), 'berth-keys-'));
        dirs.push(dir);
        const key = await newSigningKey(algorithm);
        const { key_tag } = dsOf('example.org', key);
        const base = `Kexample.org.+${String(algorithm).padStart(3, '0')}+${String(key_tag).padStart(5, '0')}`;
        writeFileSync(path.join(dir, `${base}.key`), `example.org. IN DNSKEY ${key.flags} 3 ${algorithm} ${key.publicKey}\n`);
        writeFileSync(path.join(dir, `${base}.private`), iscPrivateKey(key));
        const zone = path.join(dir, 'example.org.zone');
        writeFileSync(
          zone,
          'example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 1 3600 600 604800 300\nexample.org. 3600 IN NS ns1.example.org.\nns1.example.org. 3600 IN A 192.0.2.1\n' +
            `$INCLUDE ${base}.key\n`,
        );
        execFileSync('dnssec-signzone', ['-q', '-z', '-K', dir, '-o', 'example.org', '-f', `${zone}.signed`, zone, base], {
          cwd: dir,
          stdio: 'pipe',
        });
        const signed = readFileSync(`${zone}.signed`, 'utf8');
        expect(signed).toContain(`RRSIG\tSOA ${algorithm} 2 3600`);
        // The DS dnssec-dsfromkey computes from the signed zone's DNSKEY is Berth's.
        const theirs = execFileSync('dnssec-dsfromkey', ['-2', '-f', `${zone}.signed`, 'example.org'], { encoding: 'utf8' });
        expect(theirs.trim()).toBe(`example.org. IN DS ${dsContent(dsOf('example.org', key))}`);
      }
    },
  );
});
