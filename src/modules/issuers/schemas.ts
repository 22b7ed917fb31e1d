import { Type, type Static } from 'typebox';
import { Failure, Nullable, Timestamp } from '../../http/schemas.js';

/** Certificates, the internal CA and the mail host as the API shows them: each shape declared once. */

const Pem = (description: string, maxLength = 65_536) => Type.String({ minLength: 1, maxLength, description });
const Fingerprint = Type.String({
  pattern: '^[0-9a-f]{64}$',
  maxLength: 64,
  description: 'SHA-256 of the DER certificate, hex.',
});

export const Certificate = Type.Object(
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

export type Certificate = Static<typeof Certificate>;

export const issuerSchemas = [Certificate, Authority, MailServer];
