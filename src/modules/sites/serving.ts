import type { Queryable } from '../../db/client.js';
import { unseal } from '../../lib/sealed.js';
import type { SiteTls } from '../../provisioning/render/nginx.js';
import { findCertificate } from './certificates/repo.js';
import type { WebUnit } from './repo.js';

/** What a site is served with, on whichever server serves it. */

/** A suspended site or account gets the suspension page. */
export const servedSuspended = (unit: WebUnit) =>
  unit.status === 'suspended' || (unit.account_status !== 'active' && unit.account_status !== 'frozen');

/** An account frozen for a move (servers/account-units.ts, SERVED_STATUS): 503 with `Retry-After`. */
export const servedFrozen = (unit: WebUnit) => unit.account_status === 'frozen';

/** The PHP version a site runs (`8.3`), null for a static site. */
export const phpVersionOf = (unit: WebUnit) => (unit.runtime.startsWith('php-') ? unit.runtime.slice(4) : null);

/**
 * HTTPS is served with the site's certificate while its mode asks for one and it has one (a
 * renewal that failed keeps the old one served).
 */
export async function servedTls(db: Queryable, unit: WebUnit, sealKey: Buffer): Promise<SiteTls | null> {
  const cert = unit.tls_mode === 'none' ? undefined : await findCertificate(db, unit.id);
  return cert?.certificate_pem && cert.private_key_sealed
    ? {
        fullchainPem: cert.certificate_pem + cert.chain_pem,
        privateKeyPem: unseal(cert.private_key_sealed, sealKey),
        redirectHttp: unit.tls_redirect_http,
        hsts: unit.tls_hsts,
      }
    : null;
}
