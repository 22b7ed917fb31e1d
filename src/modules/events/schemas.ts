import { Type, type Static } from 'typebox';
import { Id, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';

/** Events as the feed shows them: each shape declared once (validator, type, document). */

export const EventSchema = Type.Object(
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

export type Event = Static<typeof EventSchema>;

export const EventListQuery = Type.Object(
  {
    ...PageQuery,
    type: Type.Optional(Type.String({ maxLength: 100 })),
    resource_id: Type.Optional(Type.String({ maxLength: 100 })),
    account_id: Type.Optional(Id('acc')),
    since: Type.Optional(Timestamp),
    after: Type.Optional(Id('evt', 'Follow the feed: the events after this one, oldest first (see the description).')),
    wait: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 30,
        format: 'int32',
        description: 'With `after`: seconds to wait for an event to commit when there is none yet (0–30; default 0).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EventListQuery = Static<typeof EventListQuery>;

export const eventSchemas = [EventSchema];
