import * as x509 from '@peculiar/x509';
import { describe, expect, it } from 'vitest';
import { ariCertId } from '../../src/tls/acme.js';
import { backoffMs, covers } from '../../src/tls/certificate.js';
import { cryptoKeys, generateKey } from '../../src/tls/keys.js';

describe('certificate names', () => {
  it('a wildcard covers exactly one more label, never the apex or a deeper name', () => {
    expect(covers('example.com', 'example.com')).toBe(true);
    expect(covers('*.example.com', 'www.example.com')).toBe(true);
    expect(covers('*.example.com', 'example.com')).toBe(false);
    expect(covers('*.example.com', 'a.b.example.com')).toBe(false);
    expect(covers('*.example.com', '*.example.com')).toBe(true);
    expect(covers('www.example.com', '*.example.com')).toBe(false);
  });
});

describe('ACME renewal information (RFC 9773)', () => {
  it("names a certificate by its issuer's key identifier and its serial, as in the RFC's example", async () => {
    const keys = await cryptoKeys(await generateKey());
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '0087654321',
      name: 'CN=ari.example',
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [new x509.AuthorityKeyIdentifierExtension('69885b6b87464041e1b37b847ba0ae2cde01c8d4')],
    });
    expect(ariCertId(cert.toString('pem'))).toBe('aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE');
  });
});

describe('issuance backoff', () => {
  it('waits 5 minutes after one failure, then an hour doubling up to a day', () => {
    expect([1, 2, 3, 4, 10].map((f) => backoffMs(f) / 60_000)).toEqual([5, 60, 120, 240, 1440]);
  });
});
