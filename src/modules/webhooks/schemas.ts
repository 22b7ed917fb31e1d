import { Type, type Static } from 'typebox';
import { Id, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';
import { EVENT_TYPES } from '../events/index.js';
import { MAX_ATTEMPTS } from './schedule.js';

/** Webhook endpoints and their deliveries as the API shows and takes them: each shape declared once. */

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  format: 'uri',
  description:
    '`https` only. The host must not resolve to a loopback, private, link-local, CGNAT, multicast or metadata address, checked when the endpoint is written and again at every delivery; hosts in `BERTH_WEBHOOK_ALLOW_HOSTS` are exempt and may use plain `http`.',
});
const EventTypes = Type.Array(StringEnum(['*', ...EVENT_TYPES] as const), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types to receive, or `["*"]` for all.',
});
const Description = Type.String({ maxLength: 500 });

const webhookFields = {
  id: Id('whk'),
  url: Type.String({ maxLength: 2048 }),
  description: Description,
  event_types: EventTypes,
  enabled: Type.Boolean(),
  disabled_reason: Nullable(
    StringEnum(['delivery_failures'] as const, {
      description: '`delivery_failures`: every retry of a delivery failed. Set `enabled` to true to resume.',
    }),
  ),
  principal: Type.Object({
    kind: StringEnum(['operator', 'reseller', 'account'] as const),
    id: Nullable(Type.String({ maxLength: 40 })),
  }),
  account_ids: Nullable(Type.Array(Id('acc'), { maxItems: 1000 })),
  previous_secret_expires_at: Nullable({
    ...Timestamp,
    description: 'After a rotation, the previous secret also signs until then.',
  }),
  ...ResourceMeta,
};
export const Webhook = Type.Object(webhookFields, {
  $id: 'Webhook',
  description:
    "An endpoint receiving the events in its owner's reach (the principal that created it, narrowed to the creating token's accounts). Deliveries follow Standard Webhooks: `webhook-id` (the event id, for deduplication), `webhook-timestamp`, `webhook-signature` (`v1,<base64 HMAC-SHA256>` per signing secret). The body is the event as `GET /v1/events/{event_id}` returns it.",
});
const WebhookWithSecret = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({ maxLength: 100, description: 'The signing secret (`whsec_...`). Shown only in this response.' }),
  },
  { $id: 'WebhookWithSecret' },
);

const Attempt = Type.Object({
  number: Type.Integer({ minimum: 1, maximum: 2147483647, format: 'int32' }),
  started_at: Timestamp,
  duration_ms: Type.Integer({ minimum: 0, maximum: 2147483647, format: 'int32' }),
  status_code: Nullable(Type.Integer({ minimum: 100, maximum: 999, format: 'int32' })),
  error: Nullable(
    Type.String({
      maxLength: 1000,
      description:
        '`<code>: <detail>`, codes `http_status`, `timeout`, `connection_error`, `redirect_not_followed`, `forbidden_address`.',
    }),
  ),
  response_excerpt: Nullable(Type.String({ maxLength: 4096, description: 'The first 1 KiB of the response body.' })),
  next_attempt_at: Nullable({ ...Timestamp, description: 'The retry this failure scheduled.' }),
});
const DeliveryStatus = StringEnum(['pending', 'sending', 'succeeded', 'failed'] as const);
export const Delivery = Type.Object(
  {
    id: Id('whd'),
    webhook_id: Id('whk'),
    event_id: Id('evt'),
    event_type: Type.String({ maxLength: 100 }),
    status: DeliveryStatus,
    attempt_count: Type.Integer({ minimum: 0, maximum: 2147483647, format: 'int32' }),
    next_attempt_at: Nullable({ ...Timestamp, description: 'While `pending`: when the next attempt is due.' }),
    last_status_code: Nullable(Type.Integer({ minimum: 100, maximum: 999, format: 'int32' })),
    last_error: Nullable(Type.String({ maxLength: 1000 })),
    completed_at: Nullable(Timestamp),
    attempts: Type.Array(Attempt, { maxItems: 1000 }),
    ...ResourceMeta,
  },
  {
    $id: 'WebhookDelivery',
    description: `One event sent to one endpoint: pending → sending → succeeded, or back to pending for a retry at about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±10 % jitter) after a non-2xx answer, a timeout (10 s) or a connection error. After ${MAX_ATTEMPTS} failed attempts it is \`failed\` and the endpoint is disabled (\`webhook.disabled\`). At least once: consumers deduplicate by \`webhook-id\`.`,
  },
);

export const DeliveryParams = Type.Object({ webhook_id: Id('whk'), delivery_id: Id('whd') }, { additionalProperties: false });
export const WebhookMutable = { url: Url, event_types: EventTypes, description: Description, enabled: Type.Boolean() };

export type Webhook = Static<typeof Webhook>;
export type Delivery = Static<typeof Delivery>;
export type WebhookPatch = Partial<Static<ReturnType<typeof Type.Object<typeof WebhookMutable>>>>;

export const CreateWebhook = Type.Object(
  { url: Url, event_types: EventTypes, description: Type.Optional(Description), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type CreateWebhook = Static<typeof CreateWebhook>;

export const WebhookListQuery = Type.Object(
  { ...PageQuery, enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type WebhookListQuery = Static<typeof WebhookListQuery>;

export const DeliveryListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(DeliveryStatus), event_type: Type.Optional(Type.String({ maxLength: 100 })) },
  { additionalProperties: false },
);
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

export const webhookSchemas = [Webhook, WebhookWithSecret, Delivery];
