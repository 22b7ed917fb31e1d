import type { Queryable } from '../../../db/client.js';
import type { StoredCertificate } from '../../issuers/index.js';

/** A site's certificate: the names it covers and where its issuance stands. */
export interface CertificateRow extends StoredCertificate {
  site_id: string;
  status: 'pending' | 'active' | 'failed';
  names: string[];
}

export async function findCertificate(db: Queryable, siteId: string): Promise<CertificateRow | undefined> {
  return (await db.query<CertificateRow>('SELECT * FROM certificates WHERE site_id = $1', [siteId])).rows[0];
}

/**
 * An issuance is asked for: `pending` — unless a served certificate still covers every name
 * (a renewal), which stays `active` meanwhile. `retry_at` stays: the renewal loop's claim.
 */
export const requestCertificate = (tx: Queryable, siteId: string, renewal: boolean) =>
  tx.query(
    `INSERT INTO certificates (site_id) VALUES ($1)
     ON CONFLICT (site_id) DO UPDATE SET status = CASE WHEN $2 THEN certificates.status ELSE 'pending' END, updated_at = now()`,
    [siteId, renewal],
  );

export interface IssuedRow {
  issuer: 'acme' | 'internal' | 'custom';
  names: string[];
  serial: string;
  not_before: Date;
  not_after: Date;
  renew_after: Date | null;
  fingerprint_sha256: string;
  certificate_pem: string;
  chain_pem: string;
  private_key_sealed: string;
}

/** A certificate to serve from now on: `active`, failures forgotten. */
export const saveIssued = (tx: Queryable, siteId: string, c: IssuedRow) =>
  tx.query(
    `INSERT INTO certificates (site_id, status, issuer, names, serial, not_before, not_after, renew_after, fingerprint_sha256,
       certificate_pem, chain_pem, private_key_sealed)
     VALUES ($1, 'active', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (site_id) DO UPDATE SET status = 'active', issuer = $2, names = $3, serial = $4, not_before = $5,
       not_after = $6, renew_after = $7, fingerprint_sha256 = $8, certificate_pem = $9, chain_pem = $10,
       private_key_sealed = $11, error = NULL, failures = 0, retry_at = NULL, expiring_notified = false, updated_at = now()`,
    [
      siteId,
      c.issuer,
      c.names,
      c.serial,
      c.not_before,
      c.not_after,
      c.renew_after,
      c.fingerprint_sha256,
      c.certificate_pem,
      c.chain_pem,
      c.private_key_sealed,
    ],
  );

/** A failed attempt: `failed`, or still `active` when the served certificate covers the site (a renewal). */
export const saveFailure = (tx: Queryable, siteId: string, f: { renewal: boolean; error: unknown; retryAt: Date }) =>
  tx.query(
    `UPDATE certificates SET status = CASE WHEN $2 THEN 'active' ELSE 'failed' END, error = $3, failures = failures + 1,
       retry_at = $4, updated_at = now()
     WHERE site_id = $1`,
    [siteId, f.renewal, JSON.stringify(f.error), f.retryAt],
  );

export const deleteCertificate = (tx: Queryable, siteId: string) =>
  tx.query('DELETE FROM certificates WHERE site_id = $1', [siteId]);

/**
 * Automatic certificates whose time has come, claimed: due for renewal, or failed and past
 * their backoff, on a site that is served. The claim moves `retry_at` on, so another process's
 * scan (or the next one) skips them while the issuance job runs; SKIP LOCKED keeps two scans
 * from claiming one row.
 */
export async function claimDue(tx: Queryable, now: Date, claimFor: Date, limit: number): Promise<string[]> {
  const r = await tx.query<{ site_id: string }>(
    `UPDATE certificates SET retry_at = $2 WHERE site_id IN (
       SELECT c.site_id FROM certificates c JOIN sites s ON s.id = c.site_id
       WHERE s.tls_mode = 'auto' AND s.status IN ('active', 'suspended')
         AND (c.retry_at IS NULL OR c.retry_at <= $1)
         AND (c.renew_after <= $1 OR c.status = 'failed')
       ORDER BY c.site_id LIMIT $3 FOR UPDATE OF c SKIP LOCKED)
     RETURNING site_id`,
    [now, claimFor, limit],
  );
  return r.rows.map((row) => row.site_id);
}

/** Served certificates that expire within `before` and were not announced yet, marked announced. */
export async function claimExpiring(tx: Queryable, before: Date): Promise<string[]> {
  const r = await tx.query<{ site_id: string }>(
    `UPDATE certificates SET expiring_notified = true WHERE site_id IN (
       SELECT site_id FROM certificates WHERE NOT expiring_notified AND certificate_pem IS NOT NULL AND not_after <= $1
       FOR UPDATE SKIP LOCKED)
     RETURNING site_id`,
    [before],
  );
  return r.rows.map((row) => row.site_id);
}
