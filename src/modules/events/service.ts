import type { Caller } from '../../auth/caller.js';
import { notFound } from '../../lib/errors.js';
import type { PageParams } from '../../http/pagination.js';
import type { ServiceDeps } from '../deps.js';
import { findEvent, listEvents, type EventFilter, type EventRow } from './repo.js';

export const toEvent = (r: EventRow) => ({
  id: r.id,
  type: r.type,
  created_at: r.created_at,
  account_id: r.account_id,
  resource: { type: r.resource_type, id: r.resource_id, version: r.resource_version },
  data: r.data,
});
export type Event = ReturnType<typeof toEvent>;

export function eventsService({ db }: ServiceDeps) {
  return {
    async get(caller: Caller, id: string): Promise<Event> {
      const row = await findEvent(db, caller, id);
      if (!row) throw notFound('event');
      return toEvent(row);
    },
    async list(caller: Caller, filter: EventFilter, page: PageParams): Promise<Event[]> {
      return (await listEvents(db, caller, filter, page)).map(toEvent);
    },
  };
}
export type EventsService = ReturnType<typeof eventsService>;
