import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import { cryptoKeys, generateKey, signingAlgorithm } from './keys.js';

x509.cryptoProvider.set(globalThis.crypto);

/** Berth's own certificate authority: its self-signed root and the root's key. */
export interface CertificateAuthority {
  certificate_pem: string;
  private_key_pem: string;
}

const DAY = 86_400_000;
/** The root outlives every certificate it signs; the leaves live as long as the ACME ones. */
const ROOT_LIFETIME_DAYS = 3650;
const INTERNAL_LIFETIME_DAYS = 90;

/** A positive serial of 128 random bits (RFC 5280 asks for at most 20 octets, non-negative). */
const serial = () => {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return bytes.toString('hex');
};

/** Backdated a little: a clock of a client that runs slightly behind still accepts it. */
const validity = (now: Date, days: number) => ({
  notBefore: new Date(now.getTime() - 60 * 60_000),
  notAfter: new Date(now.getTime() + days * DAY),
});

export async function createCertificateAuthority(name: string, now: Date): Promise<CertificateAuthority> {
  const private_key_pem = await generateKey('ecdsa-p256');
  const keys = await cryptoKeys(private_key_pem);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name}, O=Berth`,
    ...validity(now, ROOT_LIFETIME_DAYS),
    keys,
    signingAlgorithm: signingAlgorithm(createPrivateKey(private_key_pem)),
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate_pem: cert.toString('pem') + '\n', private_key_pem };
}

/** A server certificate for `names` (the first one its subject), for the key `leafKeyPem`, signed by the CA. */
export async function signWithCertificateAuthority(
  ca: CertificateAuthority,
  names: string[],
  leafKeyPem: string,
  now: Date,
  days = INTERNAL_LIFETIME_DAYS,
): Promise<string> {
  const root = new x509.X509Certificate(ca.certificate_pem);
  const signer = await cryptoKeys(ca.private_key_pem);
  const leaf = await cryptoKeys(leafKeyPem);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${names[0]}`,
    issuer: root.subject,
    ...validity(now, days),
    publicKey: leaf.publicKey,
    signingKey: signer.privateKey,
    signingAlgorithm: signingAlgorithm(createPrivateKey(ca.private_key_pem)),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        names.map((value) => (isIP(value) ? { type: 'ip' as const, value } : { type: 'dns' as const, value })),
      ),
      await x509.AuthorityKeyIdentifierExtension.create(root),
      await x509.SubjectKeyIdentifierExtension.create(leaf.publicKey),
    ],
  });
  return cert.toString('pem') + '\n';
}

/**
 * A client certificate for the public key of a certificate signing request (PKCS#10, PEM) whose
 * signature proves the requester holds the private key: the subject is `CN=<commonName>`
 * whatever the request asked for, and it may only authenticate a client.
 */
export async function signClientCertificate(
  ca: CertificateAuthority,
  csrPem: string,
  commonName: string,
  now: Date,
  days: number,
): Promise<{ certificate_pem: string; serial: string; not_after: Date }> {
  const csr = new x509.Pkcs10CertificateRequest(csrPem);
  if (!(await csr.verify())) throw new Error('The certificate request is not signed by its own key.');
  const root = new x509.X509Certificate(ca.certificate_pem);
  const signer = await cryptoKeys(ca.private_key_pem);
  const publicKey = await csr.publicKey.export();
  const serialNumber = serial();
  const { notBefore, notAfter } = validity(now, days);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber,
    subject: `CN=${commonName}`,
    issuer: root.subject,
    notBefore,
    notAfter,
    publicKey,
    signingKey: signer.privateKey,
    signingAlgorithm: signingAlgorithm(createPrivateKey(ca.private_key_pem)),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(root),
    ],
  });
  return { certificate_pem: cert.toString('pem') + '\n', serial: cert.serialNumber, not_after: notAfter };
}

/** A certificate signing request for `keyPem` (the agent makes its key and asks with this). */
export async function certificateRequest(keyPem: string, commonName: string): Promise<string> {
  const keys = await cryptoKeys(keyPem);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=${commonName}`,
    keys,
    signingAlgorithm: signingAlgorithm(createPrivateKey(keyPem)),
  });
  return csr.toString('pem') + '\n';
}

/** `sha256:<hex>` of a certificate's DER: what an enrolment command names to pin the agent CA. */
export const certificateFingerprint = (pem: string) =>
  `sha256:${new X509Certificate(pem).fingerprint256.replaceAll(':', '').toLowerCase()}`;
