import { reachSql, type Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { equalityFilters, pageOfIds, type PageParams } from '../../db/paging.js';
import { newId } from '../../lib/ids.js';
import type { EventListQuery } from './schemas.js';

export interface NewEvent {
  type: string;
  accountId: string | null;
  resellerId: string | null;
  resource: { type: string; id: string; version: number };
  /** The resource as the API returns it after the change (or before a deletion). */
  data: unknown;
}

export interface EventRow {
  id: string;
  type: string;
  account_id: string | null;
  reseller_id: string | null;
  resource_type: string;
  resource_id: string;
  resource_version: number;
  data: unknown;
  created_at: string;
}

/** Written inside the transaction of the change it describes: no event without the change. */
export async function recordEvent(tx: Queryable, e: NewEvent): Promise<EventRow> {
  const r = await tx.query<EventRow>(
    `INSERT INTO events (id, type, account_id, reseller_id, resource_type, resource_id, resource_version, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [newId('evt'), e.type, e.accountId, e.resellerId, e.resource.type, e.resource.id, e.resource.version, JSON.stringify(e.data)],
  );
  // The row as written, with the data as given (not read back through JSON).
  return { ...(r.rows[0] as EventRow), data: e.data };
}

export const pruneEvents = (db: Queryable, olderThan: Date) => db.query('DELETE FROM events WHERE created_at < $1', [olderThan]);

/** The feed's filters. */
export type EventFilter = Omit<EventListQuery, 'limit' | 'cursor'>;

const reach = (caller: Caller, params: unknown[]) => reachSql(caller, { account: 'account_id', reseller: 'reseller_id' }, params);

export async function findEvent(db: Queryable, caller: Caller, id: string): Promise<EventRow | undefined> {
  const params: unknown[] = [id];
  return (await db.query<EventRow>(`SELECT * FROM events WHERE id = $1 AND ${reach(caller, params)}`, params)).rows[0];
}

export async function listEvents(db: Queryable, caller: Caller, f: EventFilter, page: PageParams): Promise<EventRow[]> {
  const params: unknown[] = [];
  const where = [reach(caller, params)];
  where.push(...equalityFilters(f, ['type', 'resource_id', 'account_id'], '', params));
  if (f.since) where.push(`created_at >= $${params.push(f.since)}`);
  const p = pageOfIds('events', 'e', where, page, params);
  return (await db.query<EventRow>(`SELECT * FROM events e WHERE ${p.where} ${p.tail}`, params)).rows;
}
