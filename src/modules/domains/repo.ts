import { reachSql, type Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, pageOfIds, type PageParams } from '../../db/paging.js';
import { ofOneAccount, perAccount } from '../../db/per-account.js';
import { unitState } from '../../db/unit-state.js';
import * as records from './records/repo.js';
import type { DomainListQuery } from './schemas.js';

export interface DomainRow {
  id: string;
  account_id: string;
  reseller_id: string | null;
  name: string;
  unicode_name: string;
  status: 'active' | 'suspended';
  mail_enabled: boolean;
  dmarc_policy: 'none' | 'quarantine' | 'reject';
  dmarc_rua: string | null;
  catch_all: string | null;
  serial: number;
  sync_state: 'pending' | 'in_sync' | 'error';
  sync_error: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A domain as its representation shows it: with the number of its records. */
export type CountedDomainRow = DomainRow & { record_count: number };

// serial is a bigint (YYYYMMDDnn outgrows int4 in 2147); it fits a double exactly.
const COLUMNS = `d.id, d.account_id, d.reseller_id, d.name, d.unicode_name, d.status, d.mail_enabled, d.dmarc_policy, d.dmarc_rua, d.catch_all,
    d.serial::float8 AS serial, d.sync_state, d.sync_error, d.created_at, d.updated_at, d.version`;
const SELECT = `SELECT ${COLUMNS} FROM domains d`;
// The count is an index scan over the domain's records (on a 10,000-record zone, 6 to 30 ms on
// PGlite): made only for a domain that is shown (its representation, its events), not for one
// looked up to check reach, to lock its zone or to export it.
const SELECT_COUNTED = `SELECT ${COLUMNS}, ${records.recordCountOf('d.id')} AS record_count FROM domains d`;

const reach = (caller: Caller, params: unknown[]) =>
  reachSql(caller, { account: 'd.account_id', reseller: 'd.reseller_id' }, params);

/** `{domain}` in a path: the domain's id or its (A-label) name. */
export type DomainRef = { id?: string; name?: string };

async function findByRef<T>(
  db: Queryable,
  select: string,
  caller: Caller,
  ref: DomainRef,
  forUpdate: boolean,
): Promise<T | undefined> {
  const params: unknown[] = [ref.id ?? null, ref.name ?? null];
  const lock = forUpdate ? ' FOR UPDATE OF d' : '';
  return (await db.query<T>(`${select} WHERE (d.id = $1 OR d.name = $2) AND ${reach(caller, params)}${lock}`, params)).rows[0];
}

export const findDomain = (db: Queryable, caller: Caller, ref: DomainRef, forUpdate = false) =>
  findByRef<DomainRow>(db, SELECT, caller, ref, forUpdate);

export const findCountedDomain = (db: Queryable, caller: Caller, ref: DomainRef) =>
  findByRef<CountedDomainRow>(db, SELECT_COUNTED, caller, ref, false);

async function findById<T>(db: Queryable, select: string, id: string, forUpdate: boolean): Promise<T | undefined> {
  return (await db.query<T>(`${select} WHERE d.id = $1${forUpdate ? ' FOR UPDATE OF d' : ''}`, [id])).rows[0];
}

export const findDomainById = (db: Queryable, id: string, forUpdate = false) => findById<DomainRow>(db, SELECT, id, forUpdate);

export const findCountedDomainById = (db: Queryable, id: string, forUpdate = false) =>
  findById<CountedDomainRow>(db, SELECT_COUNTED, id, forUpdate);

/** What a domain update writes besides its zone. */
export type DomainFields = Pick<DomainRow, 'mail_enabled' | 'status' | 'dmarc_policy' | 'dmarc_rua' | 'catch_all'>;

/** The list's filters. */
export type DomainFilter = Omit<DomainListQuery, 'limit' | 'cursor'>;

export async function listDomains(db: Queryable, caller: Caller, f: DomainFilter, page: PageParams): Promise<CountedDomainRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params)];
  where.push(...equalityFilters(f, ['account_id', 'status', 'name'], 'd.', params));
  if (f.q) {
    const n = params.push(f.q);
    where.push(`(strpos(d.name, lower($${n})) > 0 OR strpos(d.unicode_name, lower($${n})) > 0)`);
  }
  if (f.updated_since) where.push(`d.updated_at >= $${params.push(f.updated_since)}`);
  const p = pageOfIds('domains', 'd', where, page, params);
  return (await db.query<CountedDomainRow>(`${SELECT_COUNTED} WHERE ${p.where} ${p.tail}`, params)).rows;
}

export async function insertDomain(
  tx: Queryable,
  d: Pick<DomainRow, 'id' | 'account_id' | 'name' | 'unicode_name' | 'mail_enabled' | 'serial'>,
): Promise<void> {
  await tx.query(
    'INSERT INTO domains (id, account_id, name, unicode_name, mail_enabled, serial) VALUES ($1, $2, $3, $4, $5, $6)',
    [d.id, d.account_id, d.name, d.unicode_name, d.mail_enabled, d.serial],
  );
}

/**
 * A zone change's head, in one statement: the domain's fields with a new serial, version and
 * generation bumped, and its SOA record's content; the domain as it leaves it, counted (undefined
 * if its version moved: the caller's transaction is then rolled back, the SOA with it).
 */
export async function updateDomain(
  tx: Queryable,
  id: string,
  version: number,
  f: DomainFields & { serial: number; soa: string },
): Promise<CountedDomainRow | undefined> {
  const r = await tx.query<CountedDomainRow>(
    `WITH soa AS (UPDATE dns_records SET content = $9, updated_at = now(), version = version + 1 WHERE domain_id = $1 AND type = 'SOA')
     UPDATE domains d SET mail_enabled = $3, status = $4, serial = $5, dmarc_policy = $6, dmarc_rua = $7, catch_all = $8,
       generation = generation + 1, sync_state = 'pending', updated_at = now(), version = version + 1
     WHERE d.id = $1 AND d.version = $2
     RETURNING ${COLUMNS}, ${records.recordCountOf('d.id')} AS record_count`,
    [id, version, f.mail_enabled, f.status, f.serial, f.dmarc_policy, f.dmarc_rua, f.catch_all, f.soa],
  );
  return r.rows[0];
}

/** The zone applied again as it is (a new generation, the same serial): a signed zone signed anew. */
export async function reapplyZone(tx: Queryable, id: string): Promise<{ id: string; name: string } | undefined> {
  const r = await tx.query<{ id: string; name: string }>(
    `UPDATE domains SET generation = generation + 1, sync_state = 'pending' WHERE id = $1 RETURNING id, name`,
    [id],
  );
  return r.rows[0];
}

export const deleteDomain = (tx: Queryable, id: string) => tx.query('DELETE FROM domains WHERE id = $1', [id]);

export const domainCounts = perAccount(
  'SELECT account_id, count(*)::int AS n FROM domains WHERE account_id = ANY($1::text[]) GROUP BY account_id',
);
export const countDomains = ofOneAccount(domainCounts);

/** The zone apply unit: everything a DNS driver needs, and the generation it represents. */
export interface ZoneUnit {
  name: string;
  serial: number;
  generation: number;
  applied_generation: number;
  records: Pick<records.RecordRow, 'name' | 'type' | 'ttl' | 'content'>[];
}

export async function loadZoneUnit(db: Queryable, domainId: string): Promise<ZoneUnit | undefined> {
  const d = await db.query<Omit<ZoneUnit, 'records'>>(
    // FOR SHARE: a change still being written holds the row; wait for it (jobs/names.ts, UNIT_KEYS).
    'SELECT name, serial::float8 AS serial, generation, applied_generation FROM domains WHERE id = $1 FOR SHARE',
    [domainId],
  );
  if (!d.rows[0]) return undefined;
  return { ...d.rows[0], records: await records.zoneRecords(db, domainId) };
}

/** `a.b.example.com` → itself and every name above it with two labels or more, longest first. */
function domainSuffixes(name: string): string[] {
  const labels = name.split('.');
  return labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
}

/**
 * Serialises creations of related names: each takes a transaction lock on every suffix of its
 * name with two labels or more, so a name and any domain above or below it share one lock.
 */
export async function lockDomainTree(tx: Queryable, name: string): Promise<void> {
  for (const suffix of domainSuffixes(name).sort()) await tx.query('SELECT pg_advisory_xact_lock(7482, hashtext($1))', [suffix]);
}

/** Whether a domain above `name` or below it belongs to an account other than `accountId`. */
export async function overlapsOtherAccount(db: Queryable, name: string, accountId: string): Promise<boolean> {
  const ancestors = domainSuffixes(name).slice(1);
  // Names below end in `.name`: reversed, they start with `eman.`, so they sort from there up to
  // `eman/` ('/' follows '.'); the explicit range keeps the index usable by a generic plan.
  const below = [...`.${name}`].reverse().join('');
  const r = await db.query(
    `SELECT 1 FROM domains
     WHERE account_id <> $4 AND (name = ANY($1::text[]) OR (reverse(name) ~>=~ $2 AND reverse(name) ~<~ $3))
     LIMIT 1`,
    [ancestors, below, `${below.slice(0, -1)}/`, accountId],
  );
  return r.rowCount > 0;
}

/** The zone's apply unit state lives on the domain's row. */
export const zoneUnits = unitState('domains', 'id');

export async function domainNamesOfAccount(db: Queryable, accountId: string): Promise<string[]> {
  return (await db.query<{ name: string }>('SELECT name FROM domains WHERE account_id = $1', [accountId])).rows.map(
    (r) => r.name,
  );
}

export async function domainNameTaken(db: Queryable, name: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM domains WHERE name = $1', [name])).rowCount > 0;
}

export async function zonesOfAccount(db: Queryable, accountId: string): Promise<{ id: string; name: string }[]> {
  return (await db.query<{ id: string; name: string }>('SELECT id, name FROM domains WHERE account_id = $1', [accountId])).rows;
}

/** How far the zone's applies have come: the generation written and the one the DNS server serves. */
export async function zoneProgress(db: Queryable, id: string) {
  return (
    await db.query<{ generation: number; applied_generation: number; sync_error: string | null }>(
      'SELECT generation, applied_generation, sync_error FROM domains WHERE id = $1',
      [id],
    )
  ).rows[0];
}
