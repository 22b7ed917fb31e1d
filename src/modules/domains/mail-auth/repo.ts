import type { Config } from '../../../config.js';
import type { Queryable } from '../../../db/client.js';
import { loadServerKey, subkey } from '../../../lib/server-key.js';

/** What DKIM private keys are sealed with at rest (and unsealed with for the signer alone). */
export const dkimSealKey = (config: Pick<Config, 'secretKey' | 'dataDir'>): Buffer =>
  subkey(loadServerKey(config.secretKey, config.dataDir), 'dkim keys');

export interface DkimKeyRow {
  domain_id: string;
  selector: string;
  private_key_sealed: string;
  public_key: string;
  created_at: string;
  retired_at: string | null;
}

/** The domain's keys still published: the signing one first, then retired ones, newest first. */
export async function publishedKeys(db: Queryable, domainId: string): Promise<DkimKeyRow[]> {
  const r = await db.query<DkimKeyRow>(
    `SELECT * FROM dkim_keys WHERE domain_id = $1 ORDER BY retired_at IS NOT NULL, created_at DESC, selector DESC`,
    [domainId],
  );
  return r.rows;
}

/** The key that signs the domain's mail now (sealed), if it has one. */
export async function signingKey(
  db: Queryable,
  domainId: string,
): Promise<Pick<DkimKeyRow, 'selector' | 'private_key_sealed'> | undefined> {
  const r = await db.query<DkimKeyRow>(
    'SELECT selector, private_key_sealed FROM dkim_keys WHERE domain_id = $1 AND retired_at IS NULL',
    [domainId],
  );
  return r.rows[0];
}

/** The signing keys of these domains, by domain (one query for a whole poll's units). */
export async function signingKeys(
  db: Queryable,
  domainIds: string[],
): Promise<Map<string, Pick<DkimKeyRow, 'selector' | 'private_key_sealed'>>> {
  const r = await db.query<DkimKeyRow>(
    'SELECT domain_id, selector, private_key_sealed FROM dkim_keys WHERE domain_id = ANY($1::text[]) AND retired_at IS NULL',
    [domainIds],
  );
  return new Map(r.rows.map((k) => [k.domain_id, k]));
}

export async function selectorsOf(db: Queryable, domainId: string): Promise<string[]> {
  return (await db.query<{ selector: string }>('SELECT selector FROM dkim_keys WHERE domain_id = $1', [domainId])).rows.map(
    (r) => r.selector,
  );
}

export const insertKey = (tx: Queryable, k: Pick<DkimKeyRow, 'domain_id' | 'selector' | 'private_key_sealed' | 'public_key'>) =>
  tx.query('INSERT INTO dkim_keys (domain_id, selector, private_key_sealed, public_key) VALUES ($1, $2, $3, $4)', [
    k.domain_id,
    k.selector,
    k.private_key_sealed,
    k.public_key,
  ]);

export const retireSigningKey = (tx: Queryable, domainId: string, at: Date) =>
  tx.query('UPDATE dkim_keys SET retired_at = $2 WHERE domain_id = $1 AND retired_at IS NULL', [domainId, at]);

export const deleteKeys = (tx: Queryable, domainId: string) => tx.query('DELETE FROM dkim_keys WHERE domain_id = $1', [domainId]);

/** Domains with a retired key older than `before` (its record is due to go). */
export async function domainsWithExpiredKeys(db: Queryable, before: Date): Promise<string[]> {
  const r = await db.query<{ domain_id: string }>('SELECT DISTINCT domain_id FROM dkim_keys WHERE retired_at < $1', [before]);
  return r.rows.map((x) => x.domain_id);
}

export const deleteExpiredKeys = (tx: Queryable, domainId: string, before: Date) =>
  tx.query('DELETE FROM dkim_keys WHERE domain_id = $1 AND retired_at < $2', [domainId, before]);
