import { manyRows, type Queryable } from '../../../db/client.js';
import { equalityFilters, type PageParams, pageSql } from '../../../db/paging.js';

/** A record as the zone rules see it: new ones have no id yet. */
export interface ZoneEntry {
  id?: string;
  name: string;
  type: string;
  ttl: number;
  content: string;
  managed?: boolean;
  /** Written by a template (web or mail records), not by the owner. */
  template?: boolean;
  /** Changed by the API itself (a move, a server's new address): a template record stays the template's. */
  byApi?: boolean;
}

export interface RecordRow {
  id: string;
  domain_id: string;
  name: string;
  type: string;
  ttl: number;
  content: string;
  managed: boolean;
  created_at: string;
  updated_at: string;
  version: number;
}

export type NewRecord = Pick<RecordRow, 'id' | 'name' | 'type' | 'ttl' | 'content' | 'managed'> & { template: boolean };

/** A record as read under the zone lock; `version` is what If-Match compares with. */
export type StoredEntry = ZoneEntry & { id: string; version: number };

const ENTRY_COLUMNS = ['id', 'name', 'type', 'ttl', 'content', 'managed', 'template', 'version'] as const;

export const zoneEntries = (db: Queryable, domainId: string): Promise<StoredEntry[]> =>
  manyRows<StoredEntry>(db, ENTRY_COLUMNS, 'FROM dns_records WHERE domain_id = $1', [domainId]);

/** One statement for any number of records (a new zone's template, a 10,000-record sync); the rows written if `returning`. */
export async function insertRecords(
  tx: Queryable,
  domainId: string,
  records: (ZoneEntry & { id: string })[],
  returning = false,
): Promise<StoredEntry[]> {
  if (records.length === 0) return [];
  const r = await tx.query<StoredEntry>(
    `INSERT INTO dns_records (id, domain_id, name, type, ttl, content, managed, template)
     SELECT r.id, $1, r.name, r.type, r.ttl, r.content, r.managed, r.template
     FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::boolean[], $8::boolean[])
       AS r(id, name, type, ttl, content, managed, template)${returning ? ` RETURNING ${ENTRY_COLUMNS.join(', ')}` : ''}`,
    [
      domainId,
      ...(['id', 'name', 'type', 'ttl', 'content'] as const).map((k) => records.map((r) => r[k])),
      records.map((r) => r.managed ?? false),
      records.map((r) => r.template ?? false),
    ],
  );
  return r.rows;
}

/** The record as written, or nothing for a managed one (which only the API changes). */
export const updateRecord = async (tx: Queryable, domainId: string, r: ZoneEntry & { id: string }) =>
  (
    await tx.query<StoredEntry>(
      // A template record the owner edits is the owner's from now on.
      `UPDATE dns_records SET name = $3, type = $4, ttl = $5, content = $6, template = template AND $7, updated_at = now(), version = version + 1
     WHERE domain_id = $1 AND id = $2 AND NOT managed RETURNING ${ENTRY_COLUMNS.join(', ')}`,
      [domainId, r.id, r.name, r.type, r.ttl, r.content, r.byApi === true],
    )
  ).rows[0];

/** Deletes the owner's records (`managed` ones too only for the API's own edits: ACME proofs); the ids deleted. */
export const deleteRecords = async (tx: Queryable, domainId: string, ids: string[], managedToo = false): Promise<string[]> =>
  ids.length
    ? (
        await tx.query<{ id: string }>(
          `DELETE FROM dns_records WHERE domain_id = $1 AND id = ANY($2::text[])${managedToo ? '' : ' AND NOT managed'} RETURNING id`,
          [domainId, ids],
        )
      ).rows.map((r) => r.id)
    : [];

export async function listRecords(
  db: Queryable,
  domainId: string,
  f: { name?: string; type?: string },
  page: PageParams,
): Promise<RecordRow[]> {
  const params: unknown[] = [domainId];
  const where = ['domain_id = $1'];
  where.push(...equalityFilters(f, ['name', 'type'], '', params));
  const p = pageSql(page, 'id', params);
  return (await db.query<RecordRow>(`SELECT * FROM dns_records WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`, params))
    .rows;
}

export async function findRecord(db: Queryable, domainId: string, id: string): Promise<RecordRow | undefined> {
  return (await db.query<RecordRow>('SELECT * FROM dns_records WHERE domain_id = $1 AND id = $2', [domainId, id])).rows[0];
}

/** What the zone's apply unit renders. */
export const zoneRecords = (db: Queryable, domainId: string): Promise<Pick<RecordRow, 'name' | 'type' | 'ttl' | 'content'>[]> =>
  manyRows<Pick<RecordRow, 'name' | 'type' | 'ttl' | 'content'>>(
    db,
    ['name', 'type', 'ttl', 'content'],
    'FROM dns_records WHERE domain_id = $1',
    [domainId],
  );

/** SQL for the number of records of the domain whose id `domainIdCol` names (a domain's `record_count`). */
export const recordCountOf = (domainIdCol: string) =>
  `(SELECT count(*)::int FROM dns_records r WHERE r.domain_id = ${domainIdCol})`;
