import type { Config } from '../../../config.js';
import type { Queryable } from '../../../db/client.js';
import { loadServerKey, subkey } from '../../../lib/server-key.js';

/** What DNSSEC private keys are sealed with at rest (and unsealed with for the signer alone). */
export const dnssecSealKey = (config: Pick<Config, 'secretKey' | 'dataDir'>): Buffer =>
  subkey(loadServerKey(config.secretKey, config.dataDir), 'dnssec keys');

export type DnssecStatus = 'signing' | 'pending_ds' | 'active' | 'pending_disable' | 'error';

export interface DnssecRow {
  domain_id: string;
  status: DnssecStatus;
  algorithm: number;
  denial: 'nsec' | 'nsec3';
  publish_cds: boolean;
  parent_ds_seen_at: string | null;
  /** The longest TTL (seconds) the parent's DS was seen with. */
  parent_ds_ttl: number | null;
  /** When the parent was first seen without the DS, while the zone waits to be unsigned. */
  parent_ds_gone_at: string | null;
  signed_at: string | null;
  error: { code: string; detail: string } | null;
  updated_at: string;
}

export interface DnssecKeyRow {
  id: string;
  domain_id: string;
  algorithm: number;
  flags: number;
  public_key: string;
  private_key_sealed: string;
  created_at: string;
}

export async function findDnssec(db: Queryable, domainId: string): Promise<DnssecRow | undefined> {
  return (await db.query<DnssecRow>('SELECT * FROM dnssec WHERE domain_id = $1', [domainId])).rows[0];
}

export async function keysOf(db: Queryable, domainId: string): Promise<DnssecKeyRow[]> {
  return (await db.query<DnssecKeyRow>('SELECT * FROM dnssec_keys WHERE domain_id = $1 ORDER BY id', [domainId])).rows;
}

/** Signs the zone from now on with `key`; false when it is signed already (a concurrent request won). */
export async function insertDnssec(
  tx: Queryable,
  row: Pick<DnssecRow, 'domain_id' | 'algorithm' | 'denial' | 'publish_cds'>,
  key: Omit<DnssecKeyRow, 'created_at'>,
): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO dnssec (domain_id, status, algorithm, denial, publish_cds) VALUES ($1, 'signing', $2, $3, $4)
     ON CONFLICT (domain_id) DO NOTHING`,
    [row.domain_id, row.algorithm, row.denial, row.publish_cds],
  );
  if (r.rowCount !== 1) return false;
  await tx.query(
    'INSERT INTO dnssec_keys (id, domain_id, algorithm, flags, public_key, private_key_sealed) VALUES ($1, $2, $3, $4, $5, $6)',
    [key.id, key.domain_id, key.algorithm, key.flags, key.public_key, key.private_key_sealed],
  );
  return true;
}

export async function updateDnssec(
  tx: Queryable,
  domainId: string,
  f: Partial<
    Pick<
      DnssecRow,
      'status' | 'denial' | 'publish_cds' | 'parent_ds_seen_at' | 'parent_ds_ttl' | 'parent_ds_gone_at' | 'signed_at' | 'error'
    >
  >,
): Promise<void> {
  const fields = Object.entries(f);
  if (fields.length === 0) return;
  const sets = fields.map(([k], i) => `${k} = $${i + 2}`);
  await tx.query(`UPDATE dnssec SET ${sets.join(', ')}, updated_at = now() WHERE domain_id = $1`, [
    domainId,
    ...fields.map(([k, v]) => (k === 'error' && v !== null ? JSON.stringify(v) : v)),
  ]);
}

/** Unsigned: the settings and the keys go (the zone is applied without them next). */
export async function deleteDnssec(tx: Queryable, domainId: string): Promise<void> {
  await tx.query('DELETE FROM dnssec_keys WHERE domain_id = $1', [domainId]);
  await tx.query('DELETE FROM dnssec WHERE domain_id = $1', [domainId]);
}

/** The signed zones last signed before `before`. */
export async function signedBefore(db: Queryable, before: Date): Promise<string[]> {
  const r = await db.query<{ domain_id: string }>('SELECT domain_id FROM dnssec WHERE signed_at < $1', [before.toISOString()]);
  return r.rows.map((row) => row.domain_id);
}

/** The zones waiting on their parent, for the DS to be published or to be gone, in a random order. */
export async function waitingForParent(db: Queryable): Promise<string[]> {
  const r = await db.query<{ domain_id: string }>(
    `SELECT domain_id FROM dnssec WHERE status IN ('pending_ds', 'pending_disable') ORDER BY random()`,
  );
  return r.rows.map((row) => row.domain_id);
}
