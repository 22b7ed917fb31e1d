import type { StoredCertificate } from './repo.js';
import type { Certificate } from './schemas.js';

/** A stored certificate (a site's or the mail host's) as the API shows it: `Certificate`; its key never. */
export const toCertificate = (c: StoredCertificate & { names?: string[] }, names: string[] = c.names ?? []): Certificate => ({
  issuer: c.issuer as Certificate['issuer'],
  names,
  serial: c.serial as string,
  not_before: new Date(c.not_before as Date).toISOString(),
  not_after: new Date(c.not_after as Date).toISOString(),
  fingerprint_sha256: c.fingerprint_sha256 as string,
  certificate_pem: c.certificate_pem as string,
  chain_pem: c.chain_pem,
});
