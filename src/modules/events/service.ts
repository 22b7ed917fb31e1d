import { type Caller, reachSql } from '../../auth/caller.js';
import { notFound } from '../../lib/errors.js';
import { pageSql, type PageParams } from '../../http/pagination.js';
import type { ServiceDeps } from '../deps.js';
import type { EventRow } from './repo.js';

export const toEvent = (r: EventRow) => ({
  id: r.id,
  type: r.type,
  created_at: r.created_at,
  account_id: r.account_id,
  resource: { type: r.resource_type, id: r.resource_id, version: r.resource_version },
  data: r.data,
});
export type Event = ReturnType<typeof toEvent>;

export interface EventFilter {
  type?: string;
  resource_id?: string;
  account_id?: string;
  since?: string;
}

export function eventsService({ db }: ServiceDeps) {
  const reach = (caller: Caller, params: unknown[]) =>
    reachSql(caller, { account: 'account_id', reseller: 'reseller_id' }, params);
  return {
    async get(caller: Caller, id: string): Promise<Event> {
      const params: unknown[] = [id];
      const row = (await db.query<EventRow>(`SELECT * FROM events WHERE id = $1 AND ${reach(caller, params)}`, params)).rows[0];
      if (!row) throw notFound('event');
      return toEvent(row);
    },
    async list(caller: Caller, f: EventFilter, page: PageParams): Promise<Event[]> {
      const params: unknown[] = [];
      const where = [reach(caller, params)];
      if (f.type) where.push(`type = $${params.push(f.type)}`);
      if (f.resource_id) where.push(`resource_id = $${params.push(f.resource_id)}`);
      if (f.account_id) where.push(`account_id = $${params.push(f.account_id)}`);
      if (f.since) where.push(`created_at >= $${params.push(f.since)}`);
      const p = pageSql(page, 'id', params);
      const rows = await db.query<EventRow>(`SELECT * FROM events WHERE ${where.join(' AND ')} AND ${p.where} ${p.tail}`, params);
      return rows.rows.map(toEvent);
    },
  };
}
export type EventsService = ReturnType<typeof eventsService>;
