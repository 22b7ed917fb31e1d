import type { Queryable } from '../../db/client.js';
import type { Failure } from '../../http/schemas.js';
import type { ObtainedCertificate } from '../../tls/issuer.js';

/** Berth's own CA, or undefined before its first use. */
export async function findAuthority(db: Queryable, name: string) {
  return (
    await db.query<{ certificate_pem: string; private_key_sealed: string }>(
      'SELECT certificate_pem, private_key_sealed FROM certificate_authorities WHERE name = $1',
      [name],
    )
  ).rows[0];
}

/** The first process to get here creates the CA; the others keep theirs unused (the key constraint decides). */
export const insertAuthority = (db: Queryable, name: string, certificatePem: string, keySealed: string) =>
  db.query(
    `INSERT INTO certificate_authorities (name, certificate_pem, private_key_sealed) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO NOTHING`,
    [name, certificatePem, keySealed],
  );

export async function findAcmeAccount(db: Queryable, directoryUrl: string) {
  return (
    await db.query<{ private_key_sealed: string; account_url: string | null }>(
      'SELECT private_key_sealed, account_url FROM acme_accounts WHERE directory_url = $1',
      [directoryUrl],
    )
  ).rows[0];
}

export const insertAcmeAccount = (db: Queryable, directoryUrl: string, keySealed: string) =>
  db.query(
    'INSERT INTO acme_accounts (directory_url, private_key_sealed) VALUES ($1, $2) ON CONFLICT (directory_url) DO NOTHING',
    [directoryUrl, keySealed],
  );

export const setAcmeAccountUrl = (db: Queryable, directoryUrl: string, url: string) =>
  db.query('UPDATE acme_accounts SET account_url = $2 WHERE directory_url = $1', [directoryUrl, url]);

/** The columns every stored certificate has (a site's in `certificates`, the mail host's in `host_certificates`). */
export interface StoredCertificate {
  issuer: 'acme' | 'internal' | 'custom' | null;
  serial: string | null;
  not_before: Date | null;
  not_after: Date | null;
  renew_after: Date | null;
  fingerprint_sha256: string | null;
  certificate_pem: string | null;
  chain_pem: string;
  private_key_sealed: string | null;
  error: Failure | null;
  failures: number;
  retry_at: Date | null;
}

/** The mail host's certificate: it has no `custom` issuer. */
export interface HostCertificateRow extends StoredCertificate {
  name: string;
  issuer: 'acme' | 'internal' | null;
}

export async function findHostCertificate(db: Queryable, name: string): Promise<HostCertificateRow | undefined> {
  return (await db.query<HostCertificateRow>('SELECT * FROM host_certificates WHERE name = $1', [name])).rows[0];
}

/**
 * Claims the host's certificate for an attempt when it has none, or is due for renewal, and no
 * attempt or backoff holds it: `retry_at` moves to `claimUntil`, so of all the processes looking
 * one gets the row (with its failures so far).
 */
export async function claimHostCertificate(db: Queryable, name: string, now: Date, claimUntil: Date) {
  await db.query('INSERT INTO host_certificates (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [name]);
  const r = await db.query<{ failures: number }>(
    `UPDATE host_certificates SET retry_at = $3 WHERE name = $1
       AND (certificate_pem IS NULL OR renew_after <= $2) AND (retry_at IS NULL OR retry_at <= $2)
     RETURNING failures`,
    [name, now, claimUntil],
  );
  return r.rows[0];
}

export const saveHostCertificate = (db: Queryable, name: string, c: ObtainedCertificate) =>
  db.query(
    `UPDATE host_certificates SET issuer = $2, serial = $3, not_before = $4, not_after = $5, renew_after = $6,
       fingerprint_sha256 = $7, certificate_pem = $8, chain_pem = $9, private_key_sealed = $10,
       error = NULL, failures = 0, retry_at = NULL, updated_at = now()
     WHERE name = $1`,
    [
      name,
      c.issuer,
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

/** A failed attempt: the error shown, the next one after `retryAt`; a served certificate stays. */
export const saveHostFailure = (db: Queryable, name: string, error: Record<string, unknown>, retryAt: Date) =>
  db.query(
    'UPDATE host_certificates SET error = $2, failures = failures + 1, retry_at = $3, updated_at = now() WHERE name = $1',
    [name, JSON.stringify(error), retryAt],
  );
