import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { itemRoute, listRoute, reachOf, resourceRoutes } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { IdParams } from '../../http/schemas.js';
import { EVENT_TYPES, TEST_EVENT_TYPE } from '../events/index.js';
import { CreateWebhook, DeliveryListQuery, DeliveryParams, WebhookListQuery, WebhookMutable, type Delivery } from './schemas.js';
import type { WebhooksService } from './service.js';

const sendDelivery = (reply: FastifyReply, d: Delivery) =>
  reply.code(202).header('location', `/v1/webhooks/${d.webhook_id}/deliveries/${d.id}`).send(d);

export function webhookRoutes(app: App, svc: WebhooksService): void {
  const path = '/v1/webhooks';
  const tags = ['webhooks'];
  const reach = reachOf(svc.load);
  const write = { config: { scope: 'webhooks:write' as const, reach } };

  resourceRoutes(app, {
    path,
    prefix: 'whk',
    tags,
    resource: 'Webhook',
    area: 'webhooks',
    load: svc.load,
    list: {
      operationId: 'listWebhooks',
      summary: 'List webhook endpoints',
      querystring: WebhookListQuery,
      list: svc.list,
    },
    create: {
      operationId: 'createWebhook',
      summary: 'Create a webhook endpoint',
      description:
        'Owned by the calling principal; it receives the events that principal can read. The URL is checked now and before every delivery (422 `forbidden_url` for a private or loopback host). The signing `secret` is returned once.',
      body: CreateWebhook,
      response: 'WebhookWithSecret',
      create: svc.create,
    },
    get: {
      summary: 'Get a webhook endpoint',
      get: svc.get,
    },
    update: {
      noun: 'webhook endpoint',
      mutable: WebhookMutable,
      description: 'Setting `enabled` to true resumes an endpoint that was disabled, with its waiting deliveries.',
      update: svc.update,
    },
    remove: {
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook endpoint',
      description: 'Its deliveries go with it.',
      remove: svc.remove,
    },
  });

  itemRoute(app, {
    method: 'POST',
    path: `${path}/:webhook_id/rotate-secret`,
    tags,
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the signing secret',
    description:
      'Returns the new secret once. For 24 hours deliveries carry a signature by the new and by the previous secret, so consumers can switch without losing a message.',
    scope: 'webhooks:write',
    reach,
    params: IdParams('whk'),
    response: 'WebhookWithSecret',
    run: (caller, { webhook_id }) => svc.rotateSecret(caller, webhook_id),
  });

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
    querystring: DeliveryListQuery,
    item: 'WebhookDelivery',
    list: (caller, query, page, req) =>
      svc.listDeliveries(caller, (req.params as { webhook_id: string }).webhook_id, query, page),
  });

  itemRoute(app, {
    method: 'GET',
    path: `${path}/:webhook_id/deliveries/:delivery_id`,
    tags,
    operationId: 'getWebhookDelivery',
    summary: 'Get a delivery',
    description: 'One delivery with its attempts: response status, duration and the start of the response body of each.',
    scope: 'webhooks:read',
    reach,
    params: DeliveryParams,
    response: 'WebhookDelivery',
    run: (caller, p) => svc.getDelivery(caller, p.webhook_id, p.delivery_id),
  });

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
