import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { listRoute, reachOf } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { IdParams } from '../../http/schemas.js';
import { EventListQuery } from './schemas.js';
import type { EventsService } from './service.js';

export function eventRoutes(app: App, svc: EventsService): void {
  const tags = ['events'];
  listRoute(app, {
    path: '/v1/events',
    tags,
    operationId: 'listEvents',
    summary: 'The event feed',
    description:
      'Newest first. Consumers order by `resource.version`. To follow the feed, pass `after` (an event id): the events after it, oldest first, at most `limit`, and `next_cursor` null (ask again with `after` set to the last one). With `wait` (0–30 s) an empty answer waits until an event commits, in whichever process writes it. An event is answered once its transaction and every older one have ended, so none is ever passed over. An `after` that is no event of the feed (events are kept 30 days): 422 `unknown_event`.',
    scope: 'events:read',
    querystring: EventListQuery,
    item: 'Event',
    errors: ['validation_failed'],
    list: svc.list,
  });

  app.get(
    '/v1/events/:event_id',
    {
      config: { scope: 'events:read', reach: reachOf(svc.get) },
      schema: {
        tags,
        operationId: 'getEvent',
        description: 'One entry of the event feed: the same body a webhook delivery of it carries.',
        summary: 'Get an event',
        params: IdParams('evt'),
        response: { 200: Type.Ref('Event') },
      },
    },
    async (req) => svc.get(callerOf(req), req.params.event_id),
  );
}
