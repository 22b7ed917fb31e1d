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
    description: 'Newest first. Consumers order by `resource.version`.',
    scope: 'events:read',
    querystring: EventListQuery,
    item: 'Event',
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
