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

/** The channel an event's commit is announced on (the feed's long-polls wake on it). */
export const EVENTS_CHANNEL = 'berth_events';

/** Written inside the transaction of the change it describes: no event without the change. */
export async function recordEvent(tx: Queryable, e: NewEvent): Promise<EventRow> {
  // The feed's followers are notified in the same statement, when the transaction commits
  // (several events in one transaction, once).
  const r = await tx.query<EventRow>(
    `WITH e AS (
       INSERT INTO events (id, type, account_id, reseller_id, resource_type, resource_id, resource_version, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *)
     SELECT e.* FROM e, pg_notify($9, '') n`,
    [
      newId('evt'),
      e.type,
      e.accountId,
      e.resellerId,
      e.resource.type,
      e.resource.id,
      e.resource.version,
      JSON.stringify(e.data),
      EVENTS_CHANNEL,
    ],
  );
  // The row as written, with the data as given (not read back through JSON).
  return { ...(r.rows[0] as EventRow), data: e.data };
}

export const pruneEvents = (db: Queryable, olderThan: Date) => db.query('DELETE FROM events WHERE created_at < $1', [olderThan]);

/** The feed's filters. */
export type EventFilter = Omit<EventListQuery, 'limit' | 'cursor' | 'after' | 'wait'>;

const reach = (caller: Caller, params: unknown[]) => reachSql(caller, { account: 'account_id', reseller: 'reseller_id' }, params);

export async function findEvent(db: Queryable, caller: Caller, id: string): Promise<EventRow | undefined> {
  const params: unknown[] = [id];
  return (await db.query<EventRow>(`SELECT * FROM events WHERE id = $1 AND ${reach(caller, params)}`, params)).rows[0];
}

const filters = (caller: Caller, f: EventFilter, params: unknown[]) => {
  const where = [reach(caller, params), ...equalityFilters(f, ['type', 'resource_id', 'account_id'], '', params)];
  if (f.since) where.push(`created_at >= $${params.push(f.since)}`);
  return where;
};

export async function listEvents(db: Queryable, caller: Caller, f: EventFilter, page: PageParams): Promise<EventRow[]> {
  const params: unknown[] = [];
  const p = pageOfIds('events', 'e', filters(caller, f, params), page, params);
  return (await db.query<EventRow>(`SELECT * FROM events e WHERE ${p.where} ${p.tail}`, params)).rows;
}

/**
 * The feed's horizon: the oldest transaction of this database that was running a moment ago (its
 * events may yet commit), else the next transaction id. Every transaction of this database with
 * an older id has ended by the time the next statement reads the events. Transactions of other
 * databases on the same server hold nothing back: they write no events here.
 */
const HORIZON_SQL = `
  WITH snap AS (SELECT pg_current_snapshot() AS s),
    ours AS (
      SELECT backend_xid::text::numeric AS x32 FROM pg_stat_activity
      WHERE datname = current_database() AND backend_xid IS NOT NULL)
  SELECT coalesce(
    (SELECT min(x) FROM snap, pg_snapshot_xip(snap.s) x WHERE x::text::numeric % 4294967296 IN (SELECT x32 FROM ours)),
    (SELECT pg_snapshot_xmax(s) FROM snap))::text AS horizon`;

/**
 * At most `limit` events after the one with id `afterId`, in the order their transactions
 * began, and only those whose transactions no running one precedes: each is answered once, in
 * an order that a later commit never changes. Undefined when `afterId` is no event the caller
 * can see (or one pruned).
 */
export async function eventsAfter(
  db: Queryable,
  caller: Caller,
  f: EventFilter,
  afterId: string,
  limit: number,
): Promise<EventRow[] | undefined> {
  const at: unknown[] = [afterId];
  const cursor = (await db.query<{ xid: string }>(`SELECT xid::text FROM events WHERE id = $1 AND ${reach(caller, at)}`, at))
    .rows[0];
  if (!cursor) return undefined;
  // Read before the events, in a statement of its own (see HORIZON_SQL).
  const { horizon } = (await db.query<{ horizon: string }>(HORIZON_SQL)).rows[0] as { horizon: string };
  const params: unknown[] = [cursor.xid, afterId, horizon];
  const where = ['(xid, id) > ($1::xid8, $2)', 'xid < $3::xid8', ...filters(caller, f, params)];
  const sql = `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY xid, id LIMIT $${params.push(limit)}`;
  return (await db.query<EventRow>(sql, params)).rows;
}
