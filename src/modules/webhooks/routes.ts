import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { deleteRoute, getRoute, listRoute, reachOf, updateRoutes } from '../../http/crud.js';
import { sendResource } from '../../http/etag.js';
import { sendCreated, type App } from '../../http/routes.js';
import { Id, IdParams, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';
import { EVENT_TYPES, TEST_EVENT_TYPE } from '../events/index.js';
import { MAX_ATTEMPTS } from './schedule.js';
import type { Delivery } from './representation.js';
import type { WebhooksService } from './service.js';

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
const Webhook = Type.Object(webhookFields, {
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
const Delivery = Type.Object(
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

const DeliveryParams = Type.Object({ webhook_id: Id('whk'), delivery_id: Id('whd') }, { additionalProperties: false });
const mutable = { url: Url, event_types: EventTypes, description: Description, enabled: Type.Boolean() };

const sendDelivery = (reply: FastifyReply, d: Delivery) =>
  reply.code(202).header('location', `/v1/webhooks/${d.webhook_id}/deliveries/${d.id}`).send(d);

export function webhookRoutes(app: App, svc: WebhooksService): void {
  const path = '/v1/webhooks';
  const tags = ['webhooks'];
  const reach = reachOf(svc.load);
  const read = { config: { scope: 'webhooks:read' as const, reach } };
  const write = { config: { scope: 'webhooks:write' as const, reach } };

  listRoute(app, {
    path,
    tags,
    operationId: 'listWebhooks',
    summary: 'List webhook endpoints',
    scope: 'webhooks:read',
    querystring: Type.Object({ ...PageQuery, enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    item: 'Webhook',
    list: (caller, query, page) => svc.list(caller, query, page),
  });

  app.post(
    path,
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags,
        operationId: 'createWebhook',
        summary: 'Create a webhook endpoint',
        description: 'Owned by the calling principal. The signing `secret` is returned once.',
        body: Type.Object(
          { url: Url, event_types: EventTypes, description: Type.Optional(Description), enabled: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('WebhookWithSecret') },
      },
    },
    async (req, reply) => sendCreated(reply, path, await svc.create(callerOf(req), req.body)),
  );

  getRoute(app, {
    path,
    prefix: 'whk',
    tags,
    resource: 'Webhook',
    summary: 'Get a webhook endpoint',
    scope: 'webhooks:read',
    reach,
    get: svc.get,
  });

  updateRoutes(app, {
    path,
    prefix: 'whk',
    tags,
    resource: 'Webhook',
    noun: 'webhook endpoint',
    scope: 'webhooks:write',
    reach,
    mutable,
    description: 'Setting `enabled` to true resumes an endpoint that was disabled, with its waiting deliveries.',
    update: (caller, id, patch, expected) => svc.update(caller, id, patch, expected),
  });

  deleteRoute(app, {
    path,
    prefix: 'whk',
    tags,
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook endpoint',
    description: 'Its deliveries go with it.',
    scope: 'webhooks:write',
    reach,
    remove: (caller, id, expected) => svc.remove(caller, id, expected),
  });

  app.post(
    `${path}/:webhook_id/rotate-secret`,
    {
      ...write,
      schema: {
        tags,
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description:
          'Returns the new secret once. For 24 hours deliveries carry a signature by the new and by the previous secret, so consumers can switch without losing a message.',
        params: IdParams('whk'),
        response: { 200: Type.Ref('WebhookWithSecret') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.rotateSecret(callerOf(req), req.params.webhook_id)),
  );

  app.post(
    `${path}/:webhook_id/test`,
    {
      ...write,
      schema: {
        tags,
        operationId: 'testWebhook',
        summary: 'Send a webhook.test event',
        description:
          'To this endpoint only, whatever its `event_types`; it does not appear in the event feed. 202 with the delivery.',
        params: IdParams('whk'),
        response: { 202: Type.Ref('WebhookDelivery') },
      },
    },
    async (req, reply) => sendDelivery(reply, await svc.test(callerOf(req), req.params.webhook_id)),
  );

  listRoute(app, {
    path: `${path}/:webhook_id/deliveries`,
    tags,
    operationId: 'listWebhookDeliveries',
    summary: "An endpoint's deliveries and their attempts",
    description: 'Newest first; finished deliveries are kept 30 days.',
    scope: 'webhooks:read',
    params: IdParams('whk'),
    reach,
    querystring: Type.Object(
      { ...PageQuery, status: Type.Optional(DeliveryStatus), event_type: Type.Optional(Type.String({ maxLength: 100 })) },
      { additionalProperties: false },
    ),
    item: 'WebhookDelivery',
    list: (caller, query, page, req) =>
      svc.listDeliveries(caller, (req.params as { webhook_id: string }).webhook_id, query, page),
  });

  app.get(
    `${path}/:webhook_id/deliveries/:delivery_id`,
    {
      ...read,
      schema: {
        tags,
        operationId: 'getWebhookDelivery',
        description: 'One delivery with its attempts: response status, duration and the start of the response body of each.',
        summary: 'Get a delivery',
        params: DeliveryParams,
        response: { 200: Type.Ref('WebhookDelivery') },
      },
    },
    async (req, reply) =>
      sendResource(req, reply, await svc.getDelivery(callerOf(req), req.params.webhook_id, req.params.delivery_id)),
  );

  app.post(
    `${path}/:webhook_id/deliveries/:delivery_id/retry`,
    {
      ...write,
      schema: {
        tags,
        operationId: 'retryWebhookDelivery',
        summary: 'Send a delivery again now',
        description:
          'A finished delivery is sent once more (its failure schedules no retries and does not disable the endpoint); a waiting one is sent ahead of its schedule. 409 while it is being sent or when the endpoint is disabled.',
        params: DeliveryParams,
        response: { 202: Type.Ref('WebhookDelivery') },
      },
    },
    async (req, reply) =>
      sendDelivery(reply, await svc.retryDelivery(callerOf(req), req.params.webhook_id, req.params.delivery_id)),
  );
}

export const webhookSchemas = [Webhook, WebhookWithSecret, Delivery];

const SIGNED_HEADERS = [
  ['webhook-id', 'The event id: the same on every retry, for deduplication.'],
  ['webhook-timestamp', 'Seconds since the epoch when this attempt was signed.'],
  ['webhook-signature', 'Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per signing secret.'],
].map(([name, description]) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string', maxLength: 1000 },
}));

/** The OpenAPI `webhooks` section: one request per event type, each body an Event. */
export function webhookDocs(): Record<string, unknown> {
  const entries = [...EVENT_TYPES, TEST_EVENT_TYPE].map((type): [string, unknown] => [
    type,
    {
      post: {
        operationId: `webhook_${type.replaceAll('.', '_')}`,
        summary: `The ${type} event`,
        tags: ['webhooks'],
        security: [],
        parameters: SIGNED_HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' } } } },
        responses: {
          '2XX': { description: 'Received. Anything else (or no answer within 10 s) is retried.' },
        },
      },
    },
  ]);
  return Object.fromEntries(entries);
}
