import { Type } from 'typebox';
import type { App } from '../../http/routes.js';
import { describeCertificate } from '../../tls/certificate.js';
import type { InternalAuthority } from './issuers.js';
import type { HostCertificateRow } from './repo.js';
import { toCertificate } from './representation.js';

/**
 * What every authenticated caller may read about the provider's TLS: the internal CA's root
 * (to trust its certificates) and the mail host with its certificate (to configure mail clients).
 */
export function issuerRoutes(
  app: App,
  o: {
    authority: InternalAuthority;
    mailHost: string | null;
    mailHostCertificate: (host: string) => Promise<HostCertificateRow | undefined>;
  },
): void {
  app.get(
    '/v1/certificate-authorities/internal',
    {
      schema: {
        tags: ['sites'],
        operationId: 'getInternalCertificateAuthority',
        summary: "The internal CA's root certificate",
        description:
          'The root that signs certificates of the `internal` issuer (used when no ACME directory is configured). Trust it to reach the sites and the mail host over TLS without warnings. Any authenticated caller may read it.',
        response: { 200: Type.Ref('CertificateAuthority') },
      },
    },
    async () => {
      const ca = await o.authority();
      return {
        certificate_pem: ca.certificate_pem,
        fingerprint_sha256: describeCertificate(ca.certificate_pem).fingerprint_sha256,
      };
    },
  );

  app.get(
    '/v1/mail-server',
    {
      schema: {
        tags: ['emails'],
        operationId: 'getMailServer',
        summary: 'The mail host and its certificate',
        description:
          "Where mailboxes submit mail (SMTP on 587 with STARTTLS and AUTH) and what certificate that service presents: issued by the configured issuer (ACME, or the internal CA) and renewed like a site's. Any authenticated caller may read it.",
        response: { 200: Type.Ref('MailServer') },
      },
    },
    async () => {
      const row = o.mailHost ? await o.mailHostCertificate(o.mailHost) : undefined;
      return {
        host: o.mailHost,
        certificate: row?.certificate_pem ? toCertificate(row, [row.name]) : null,
        certificate_error: (row?.error as { code: string; detail: string } | null | undefined) ?? null,
      };
    },
  );
}
