import { createPrivateKey, generateKeyPair, type JsonWebKey } from 'node:crypto';
import { promisify } from 'node:util';
import type { Dnskey } from './ds.js';

/** The algorithms a zone may be signed with: 13 ECDSAP256SHA256 (the default), 15 ED25519, 8 RSASHA256. */
export const DNSSEC_ALGORITHMS = [13, 15, 8] as const;
export type DnssecAlgorithm = (typeof DNSSEC_ALGORITHMS)[number];

const NAMES: Record<DnssecAlgorithm, string> = { 13: 'ECDSAP256SHA256', 15: 'ED25519', 8: 'RSASHA256' };

/** A combined signing key (CSK: flags 257, it signs the DNSKEY set and the zone): its DNSKEY and its private key. */
export interface SigningKey extends Dnskey {
  /** PKCS #8, PEM. */
  privatePem: string;
}

const generate = promisify(generateKeyPair);
const b64 = (base64url: string | undefined) => Buffer.from(base64url ?? '', 'base64url');

/** A new signing key of `algorithm` (RSA: 2048 bits, exponent 65537). */
export async function newSigningKey(algorithm: DnssecAlgorithm): Promise<SigningKey> {
  const pem = { privateKeyEncoding: { type: 'pkcs8' as const, format: 'pem' as const } };
  const { privateKey } =
    algorithm === 13
      ? await generate('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, ...pem })
      : algorithm === 15
        ? await generate('ed25519', { publicKeyEncoding: { type: 'spki', format: 'pem' }, ...pem })
        : await generate('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, ...pem });
  return { flags: 257, algorithm, publicKey: dnskeyPublicKey(privateKey, algorithm), privatePem: privateKey };
}

const jwkOf = (privatePem: string): JsonWebKey => createPrivateKey(privatePem).export({ format: 'jwk' });

/**
 * The DNSKEY's public key field: ECDSA P-256 the point's x and y (RFC 6605 §4), Ed25519 the
 * 32-byte key (RFC 8080 §3), RSA the exponent's length, the exponent and the modulus (RFC 3110 §2).
 */
function dnskeyPublicKey(privatePem: string, algorithm: DnssecAlgorithm): string {
  const jwk = jwkOf(privatePem);
  if (algorithm === 13) return Buffer.concat([b64(jwk.x), b64(jwk.y)]).toString('base64');
  if (algorithm === 15) return b64(jwk.x).toString('base64');
  const e = b64(jwk.e);
  const length = e.length < 256 ? Buffer.from([e.length]) : Buffer.from([0, e.length >> 8, e.length & 0xff]);
  return Buffer.concat([length, e, b64(jwk.n)]).toString('base64');
}

/**
 * The private key in BIND's `Private-key-format` (v1.3), which `dnssec-signzone` reads from a
 * `K*.private` file and PowerDNS's cryptokeys API takes as `privatekey`.
 */
export function iscPrivateKey(key: Pick<SigningKey, 'algorithm' | 'privatePem'>): string {
  const jwk = jwkOf(key.privatePem);
  const algorithm = key.algorithm as DnssecAlgorithm;
  const fields: [string, string | undefined][] =
    algorithm === 8
      ? [
          ['Modulus', jwk.n],
          ['PublicExponent', jwk.e],
          ['PrivateExponent', jwk.d],
          ['Prime1', jwk.p],
          ['Prime2', jwk.q],
          ['Exponent1', jwk.dp],
          ['Exponent2', jwk.dq],
          ['Coefficient', jwk.qi],
        ]
      : [['PrivateKey', jwk.d]];
  const lines = [
    'Private-key-format: v1.3',
    `Algorithm: ${algorithm} (${NAMES[algorithm]})`,
    ...fields.map(([name, v]) => `${name}: ${b64(v).toString('base64')}`),
  ];
  return `${lines.join('\n')}\n`;
}
