import type { Queryable } from '../../db/client.js';
import type { ZoneEntry } from './validate.js';

/** A record as read under the zone lock; `version` is what If-Match compares with. */
export type StoredEntry = ZoneEntry & { id: string; version: number };

export async function zoneEntries(db: Queryable, domainId: string): Promise<StoredEntry[]> {
  return (
    await db.query<StoredEntry>('SELECT id, name, type, ttl, content, managed, version FROM dns_records WHERE domain_id = $1', [
      domainId,
    ])
  ).rows;
}

/** One statement for any number of records (a 10,000-record sync is one round trip). */
export async function insertRecords(tx: Queryable, domainId: string, records: (ZoneEntry & { id: string })[]): Promise<void> {
  if (records.length === 0) return;
  await tx.query(
    `INSERT INTO dns_records (id, domain_id, name, type, ttl, content)
     SELECT r.id, $1, r.name, r.type, r.ttl, r.content
     FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[]) AS r(id, name, type, ttl, content)`,
    [domainId, ...(['id', 'name', 'type', 'ttl', 'content'] as const).map((k) => records.map((r) => r[k]))],
  );
}

export const updateRecord = (tx: Queryable, domainId: string, r: ZoneEntry & { id: string }) =>
  tx.query(
    `UPDATE dns_records SET name = $3, type = $4, ttl = $5, content = $6, updated_at = now(), version = version + 1
     WHERE domain_id = $1 AND id = $2 AND NOT managed`,
    [domainId, r.id, r.name, r.type, r.ttl, r.content],
  );

export const deleteRecords = (tx: Queryable, domainId: string, ids: string[]) =>
  ids.length
    ? tx.query('DELETE FROM dns_records WHERE domain_id = $1 AND id = ANY($2::text[]) AND NOT managed', [domainId, ids])
    : Promise.resolve();
