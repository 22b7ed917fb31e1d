import { reachSql, type Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, pageOfIds, type PageParams } from '../../db/paging.js';
import { ofOneAccount, perAccount } from '../../db/per-account.js';
import type { Autoresponder, MailListQuery } from './schemas.js';

/** A row of mail_addresses is a mailbox or a forwarder. */
export type AddressKind = 'mailbox' | 'forwarder';

export interface AddressRow {
  id: string;
  kind: AddressKind;
  domain_id: string;
  domain_name: string;
  account_id: string;
  reseller_id: string | null;
  address: string;
  password_hash: string | null;
  quota_mb: number | null;
  status: 'active' | 'suspended';
  forward_to: string[];
  autoresponder: Autoresponder | null;
  sync_state: 'pending' | 'in_sync' | 'error';
  sync_error: string | null;
  /** Bytes its agent measured when its account's mail is on another server; null on the local one. */
  measured_bytes: number | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** The writable columns of an address. */
export type AddressFields = Pick<AddressRow, 'password_hash' | 'quota_mb' | 'status' | 'forward_to' | 'autoresponder'>;

// The sync state is the mail unit's: a domain's addresses are applied together.
const SELECT = `SELECT m.id, m.kind, m.domain_id, d.name AS domain_name, m.account_id, m.reseller_id, m.address,
    m.password_hash, m.quota_mb, m.status, m.forward_to, m.autoresponder, coalesce(u.sync_state, 'pending') AS sync_state,
    u.sync_error, m.measured_bytes::float8 AS measured_bytes, m.created_at, m.updated_at, m.version
  FROM mail_addresses m JOIN domains d ON d.id = m.domain_id LEFT JOIN mail_units u ON u.domain_id = m.domain_id`;

const reach = (caller: Caller, params: unknown[]) =>
  reachSql(caller, { account: 'm.account_id', reseller: 'm.reseller_id' }, params);

export async function findAddress(
  db: Queryable,
  caller: Caller,
  kind: AddressKind,
  id: string,
  forUpdate = false,
): Promise<AddressRow | undefined> {
  const params: unknown[] = [id, kind];
  const lock = forUpdate ? ' FOR UPDATE OF m' : '';
  return (await db.query<AddressRow>(`${SELECT} WHERE m.id = $1 AND m.kind = $2 AND ${reach(caller, params)}${lock}`, params))
    .rows[0];
}

export async function findAddressById(db: Queryable, id: string): Promise<AddressRow | undefined> {
  return (await db.query<AddressRow>(`${SELECT} WHERE m.id = $1`, [id])).rows[0];
}

/** The list's filters; `domain` is an id or an A-label name. */
export type AddressFilter = Omit<MailListQuery, 'limit' | 'cursor'>;

export async function listAddresses(
  db: Queryable,
  caller: Caller,
  kind: AddressKind,
  f: AddressFilter,
  page: PageParams,
): Promise<AddressRow[]> {
  const params: unknown[] = [kind];
  const where = ['m.kind = $1', reach(caller, params)];
  where.push(...equalityFilters(f, ['account_id'], 'm.', params));
  if (f.domain) {
    const n = params.push(f.domain);
    where.push(`m.domain_id IN (SELECT id FROM domains WHERE id = $${n} OR name = $${n})`);
  }
  if (f.q) where.push(`strpos(m.address, lower($${params.push(f.q)})) > 0`);
  const p = pageOfIds('mail_addresses', 'm', where, page, params);
  return (await db.query<AddressRow>(`${SELECT} WHERE ${p.where} ${p.tail}`, params)).rows;
}

export async function insertAddress(
  tx: Queryable,
  a: Pick<AddressRow, 'id' | 'kind' | 'domain_id' | 'account_id' | 'address'> & AddressFields,
): Promise<void> {
  await tx.query(
    `INSERT INTO mail_addresses (id, kind, domain_id, account_id, address, password_hash, quota_mb, status, forward_to, autoresponder)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      a.id,
      a.kind,
      a.domain_id,
      a.account_id,
      a.address,
      a.password_hash,
      a.quota_mb,
      a.status,
      a.forward_to,
      a.autoresponder === null ? null : JSON.stringify(a.autoresponder),
    ],
  );
}

/** Writes the fields if the row is still at `version`; false when it moved on (412). */
export async function updateAddress(tx: Queryable, id: string, version: number, f: AddressFields): Promise<boolean> {
  const r = await tx.query(
    `UPDATE mail_addresses SET password_hash = $3, quota_mb = $4, status = $5, forward_to = $6, autoresponder = $7,
       updated_at = now(), version = version + 1
     WHERE id = $1 AND version = $2`,
    [
      id,
      version,
      f.password_hash,
      f.quota_mb,
      f.status,
      f.forward_to,
      f.autoresponder === null ? null : JSON.stringify(f.autoresponder),
    ],
  );
  return r.rowCount === 1;
}

export const deleteAddress = (tx: Queryable, id: string) => tx.query('DELETE FROM mail_addresses WHERE id = $1', [id]);

export const mailboxCounts = perAccount(
  `SELECT account_id, count(*)::int AS n FROM mail_addresses WHERE account_id = ANY($1::text[]) AND kind = 'mailbox' GROUP BY account_id`,
);
export const countMailboxes = ofOneAccount(mailboxCounts);

/** Every address of a domain (for `in_use` and for cascades). */
export async function addressesOfDomain(db: Queryable, domainId: string): Promise<AddressRow[]> {
  return (await db.query<AddressRow>(`${SELECT} WHERE m.domain_id = $1 ORDER BY m.address`, [domainId])).rows;
}

export async function findAddressByName(db: Queryable, address: string): Promise<AddressRow | undefined> {
  const id = (await db.query<{ id: string }>('SELECT id FROM mail_addresses WHERE address = $1', [address])).rows[0]?.id;
  return id ? findAddressById(db, id) : undefined;
}

/** Bytes of the account's mailboxes as measured on another mail server (0 for mail kept here, which the home's walk counts). */
export const measuredMailBytes = perAccount(
  `SELECT account_id, coalesce(sum(measured_bytes), 0)::float8 AS n FROM mail_addresses
   WHERE account_id = ANY($1::text[]) GROUP BY account_id`,
);
