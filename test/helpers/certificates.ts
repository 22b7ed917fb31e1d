import { generateKeyPairSync } from 'node:crypto';
import {
  createCertificateAuthority,
  signWithCertificateAuthority,
  type CertificateAuthority,
} from '../../src/tls/internal-ca.js';
import { generateKey } from '../../src/tls/keys.js';

/** A CA of the test's own, to make certificates a customer might upload. */
export const testAuthority = (now = new Date()) => createCertificateAuthority('Test Upload CA', now);

export interface TestCertificate {
  certificate_pem: string;
  private_key_pem: string;
}

/** A certificate for `names` from `ca`, valid from an hour before `now` for `days`. */
export async function testCertificate(
  ca: CertificateAuthority,
  names: string[],
  o: { now?: Date; days?: number; keyPem?: string } = {},
): Promise<TestCertificate> {
  const keyPem = o.keyPem ?? (await generateKey());
  return {
    certificate_pem: await signWithCertificateAuthority(ca, names, keyPem, o.now ?? new Date(), o.days ?? 30),
    private_key_pem: keyPem,
  };
}

/** An RSA key too small for the web (1024 bits). */
export const weakRsaKey = () =>
  generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
