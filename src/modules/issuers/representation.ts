import { Type } from 'typebox';
import { Failure, Nullable, Timestamp } from '../../http/schemas.js';

const Pem = (description: string, maxLength = 65_536) => Type.String({ minLength: 1, maxLength, description });
const Fingerprint = Type.String({
  pattern: '^[0-9a-f]{64}$',
  maxLength: 64,
  description: 'SHA-256 of the DER certificate, hex.',
});

const Certificate = Type.Object(
  {
    issuer: Type.Union([Type.Literal('acme'), Type.Literal('internal'), Type.Literal('custom')]),
    names: Type.Array(Type.String({ maxLength: 253 }), { maxItems: 100, description: 'The DNS names it covers.' }),
    serial: Type.String({ maxLength: 64, description: 'Lower-case hex.' }),
    not_before: Timestamp,
    not_after: Timestamp,
    fingerprint_sha256: Fingerprint,
    certificate_pem: Pem('The leaf certificate.'),
    chain_pem: Type.String({
      maxLength: 65_536,
      description: 'The intermediates, issuer first (empty when the root signed the leaf).',
    }),
  },
  {
    $id: 'Certificate',
    description: "A certificate Berth serves: a site's HTTPS, the mail host's STARTTLS. Its private key is never returned.",
  },
);

const Authority = Type.Object(
  { certificate_pem: Pem("The internal CA's root certificate."), fingerprint_sha256: Fingerprint },
  { $id: 'CertificateAuthority', description: 'A certificate authority to trust for the certificates it issues.' },
);

const MailServer = Type.Object(
  {
    host: Nullable(
      Type.String({
        maxLength: 253,
        description:
          "The host mail clients submit to (port 587, STARTTLS) and every mail-enabled domain's MX (`BERTH_MAIL_HOST`); null when the provider configured none.",
      }),
    ),
    certificate: Type.Union([Type.Ref('Certificate'), Type.Null()], {
      description: 'What the submission service serves for the host; null until the first one is issued.',
    }),
    certificate_error: Type.Union([Failure, Type.Null()], {
      description:
        'Why the last attempt to obtain or renew it failed (the older certificate stays served); retried with backoff.',
    }),
  },
  { $id: 'MailServer', description: "The provider's mail host, for configuring mail clients." },
);

export const issuerSchemas = [Certificate, Authority, MailServer];

/** What a certificate row shows (its key never). */
export interface StoredCertificate {
  issuer: 'acme' | 'internal' | 'custom' | null;
  names?: string[];
  serial: string | null;
  not_before: Date | null;
  not_after: Date | null;
  fingerprint_sha256: string | null;
  certificate_pem: string | null;
  chain_pem: string;
}

/** A stored certificate as the API shows it: `Certificate`. */
export const toCertificate = (c: StoredCertificate, names: string[] = c.names ?? []) => ({
  issuer: c.issuer as 'acme' | 'internal' | 'custom',
  names,
  serial: c.serial as string,
  not_before: new Date(c.not_before as Date).toISOString(),
  not_after: new Date(c.not_after as Date).toISOString(),
  fingerprint_sha256: c.fingerprint_sha256 as string,
  certificate_pem: c.certificate_pem as string,
  chain_pem: c.chain_pem,
});
