import type { Caller } from '../../auth/caller.js';
import type { PageParams } from '../../db/paging.js';
import { notFound } from '../../lib/errors.js';
import type { ServiceDeps } from '../deps.js';
import { findEvent, listEvents, type EventFilter } from './repo.js';
import { toEvent } from './representation.js';
import type { Event } from './schemas.js';

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
