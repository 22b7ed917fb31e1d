import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import type { FieldError } from '../lib/errors.js';
import { dnsNames, pemBlocks, uncovered } from './certificate.js';

export interface CustomCertificateInput {
  certificate_pem: string;
  private_key_pem: string;
  chain_pem?: string;
}

/** A custom certificate that passed every check: the leaf, its chain (issuer first), the key. */
export interface CheckedCertificate {
  certificate_pem: string;
  chain_pem: string;
  private_key_pem: string;
}

const fail = (pointer: string, code: string, detail: string): FieldError => ({ pointer, code, detail });

function parseCertificates(text: string, pointer: string, errors: FieldError[]): X509Certificate[] {
  const blocks = pemBlocks(text);
  const certs: X509Certificate[] = [];
  for (const block of blocks) {
    try {
      certs.push(new X509Certificate(block));
    } catch {
      errors.push(fail(pointer, 'invalid_certificate', 'a PEM block is not a readable X.509 certificate'));
      return [];
    }
  }
  return certs;
}

/** RSA of 2048 bits or more, or ECDSA on P-256 or P-384: what browsers and nginx accept everywhere. */
function keyProblem(key: KeyObject): string | null {
  const d = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa')
    return (d.modulusLength ?? 0) >= 2048 ? null : `an RSA key of ${d.modulusLength} bits (2048 or more are needed)`;
  if (key.asymmetricKeyType === 'ec')
    return d.namedCurve === 'prime256v1' || d.namedCurve === 'secp384r1'
      ? null
      : `an ECDSA key on ${d.namedCurve} (P-256 or P-384 are accepted)`;
  return `a ${key.asymmetricKeyType} key (RSA ≥ 2048 or ECDSA P-256/P-384 are accepted)`;
}

/**
 * The checks of an uploaded certificate, each failure with its pointer: a readable
 * leaf and key that belong together, valid now, covering every name of the site, a chain whose
 * every certificate issued the one before it, and a key of an accepted type and size. Extra
 * certificates after the leaf in `certificate_pem` (a "full chain" file) count as chain.
 */
export function checkCustomCertificate(
  input: CustomCertificateInput,
  siteNames: string[],
  now: Date,
): FieldError[] | CheckedCertificate {
  const errors: FieldError[] = [];
  const certs = parseCertificates(input.certificate_pem, '/certificate_pem', errors);
  const chain = [...certs.slice(1), ...parseCertificates(input.chain_pem ?? '', '/chain_pem', errors)];
  const leaf = certs[0];
  if (!leaf && !errors.length)
    errors.push(fail('/certificate_pem', 'invalid_certificate', 'no PEM certificate (-----BEGIN CERTIFICATE-----) found'));
  let key: KeyObject | undefined;
  try {
    key = createPrivateKey(input.private_key_pem);
  } catch {
    errors.push(fail('/private_key_pem', 'invalid_key', 'not a readable, unencrypted PEM private key'));
  }
  if (key) {
    const problem = keyProblem(key);
    if (problem) errors.push(fail('/private_key_pem', 'unsupported_key', `${problem}`));
  }
  if (!leaf) return errors;
  if (key && !leaf.checkPrivateKey(key))
    errors.push(fail('/private_key_pem', 'key_mismatch', 'the private key does not belong to the certificate'));
  if (new Date(leaf.validTo) <= now)
    errors.push(fail('/certificate_pem', 'expired', `the certificate expired at ${new Date(leaf.validTo).toISOString()}`));
  else if (new Date(leaf.validFrom) > now)
    errors.push(
      fail('/certificate_pem', 'not_yet_valid', `the certificate is valid from ${new Date(leaf.validFrom).toISOString()}`),
    );
  const missing = uncovered(dnsNames(leaf), siteNames);
  if (missing.length)
    errors.push(fail('/certificate_pem', 'names_not_covered', `the certificate does not cover ${missing.join(', ')}`));
  let child = leaf;
  for (const [i, parent] of chain.entries()) {
    if (!child.checkIssued(parent) || !child.verify(parent.publicKey)) {
      const which = i === 0 ? 'the leaf' : `chain certificate ${i}`;
      errors.push(fail('/chain_pem', 'broken_chain', `certificate ${i + 1} of the chain did not issue ${which}`));
      break;
    }
    child = parent;
  }
  if (errors.length) return errors;
  return {
    certificate_pem: leaf.toString(),
    chain_pem: chain.map((c) => c.toString()).join(''),
    private_key_pem: (key as KeyObject).export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}
