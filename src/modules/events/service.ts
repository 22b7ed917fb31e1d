import type { Caller } from '../../auth/caller.js';
import type { PageParams } from '../../db/paging.js';
import { invalid, notFound } from '../../lib/errors.js';
import type { ServiceDeps } from '../deps.js';
import { EVENTS_CHANNEL, eventsAfter, findEvent, listEvents, type EventFilter } from './repo.js';
import { toEvent } from './representation.js';
import type { Event, EventListQuery } from './schemas.js';

const RECHECK_MS = 1000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function eventsService({ db }: ServiceDeps) {
  /**
   * The events after `after`, waiting up to `waitMs` for the first to commit: woken by the
   * commit's notification, in whichever process wrote it, and looking again every second (an
   * event held back by an older transaction still running is answered once that one ends).
   */
  async function follow(caller: Caller, filter: EventFilter, after: string, limit: number, waitMs: number) {
    const deadline = Date.now() + waitMs;
    for (;;) {
      let wake = () => undefined as void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      // Listening before reading: a commit in between still wakes the wait.
      const unlisten = waitMs > 0 ? await db.listen(EVENTS_CHANNEL, () => wake()) : undefined;
      try {
        const rows = await eventsAfter(db, caller, filter, after, limit);
        if (!rows)
          throw invalid([
            { pointer: '/query/after', code: 'unknown_event', detail: 'is no event of the feed (events are kept 30 days)' },
          ]);
        const left = deadline - Date.now();
        if (rows.length > 0 || left <= 0) return rows;
        await Promise.race([woken, pause(Math.min(left, RECHECK_MS))]);
      } finally {
        await unlisten?.();
      }
    }
  }

  return {
    async get(caller: Caller, id: string): Promise<Event> {
      const row = await findEvent(db, caller, id);
      if (!row) throw notFound('event');
      return toEvent(row);
    },
    async list(caller: Caller, query: EventListQuery, page: PageParams): Promise<Event[]> {
      const { after, wait, ...filter } = query;
      if (after === undefined) return (await listEvents(db, caller, filter, page)).map(toEvent);
      if (page.afterId)
        throw invalid([{ pointer: '/query/cursor', code: 'not_with_after', detail: 'a feed followed with after has no cursor' }]);
      return (await follow(caller, filter, after, page.limit, (wait ?? 0) * 1000)).map(toEvent);
    },
  };
}
export type EventsService = ReturnType<typeof eventsService>;
