import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { listRoute, reachOf } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { Id, IdParams, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';
import type { EventsService } from './service.js';

const EventSchema = Type.Object(
  {
    id: Id('evt'),
    type: Type.String({ maxLength: 100, examples: ['account.created'] }),
    created_at: Timestamp,
    account_id: Nullable(Id('acc')),
    resource: Type.Object({
      type: Type.String({ maxLength: 50 }),
      id: Type.String({ maxLength: 100 }),
      version: Type.Integer({ minimum: 0, maximum: 2147483647, format: 'int32' }),
    }),
    data: Type.Unsafe<unknown>({
      type: 'object',
      additionalProperties: true,
      description: 'The resource as the API returned it after the change (before a deletion).',
    }),
  },
  { $id: 'Event', description: 'A change, written in the same transaction as the change itself. Kept 30 days.' },
);

export function eventRoutes(app: App, svc: EventsService): void {
  const tags = ['events'];
  listRoute(app, {
    path: '/v1/events',
    tags,
    operationId: 'listEvents',
    summary: 'The event feed',
    description: 'Newest first. Consumers order by `resource.version`.',
    scope: 'events:read',
    querystring: Type.Object(
      {
        ...PageQuery,
        type: Type.Optional(Type.String({ maxLength: 100 })),
        resource_id: Type.Optional(Type.String({ maxLength: 100 })),
        account_id: Type.Optional(Id('acc')),
        since: Type.Optional(Timestamp),
      },
      { additionalProperties: false },
    ),
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

export const eventSchemas = [EventSchema];
