import type { Contribution } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import { loadServerKey, subkey } from '../../lib/server-key.js';
import type { ServiceDeps } from '../deps.js';
import { type NewEvent, EVENT_RETENTION_MS } from '../events/index.js';
import { addressPolicy, type Lookup } from './address-policy.js';
import { webhookDeliverer } from './deliver.js';
import { deliveryCounts, pruneDeliveries } from './deliveries-repo.js';
import { deliveryRelay } from './relay.js';
import { webhookRoutes } from './routes.js';
import { webhookSchemas } from './schemas.js';
import { webhooksService } from './service.js';

export interface WebhooksModuleOptions {
  /** How endpoint hosts resolve (tests inject a table). */
  lookup?: Lookup;
  /** Announces `webhook.disabled` (publishing sits above this module). */
  publish: (tx: Queryable, e: NewEvent) => Promise<unknown>;
  onError: (err: unknown) => void;
}

/** Endpoints, the outbox's relay and the delivery workers. */
export function webhooksModule(svc: ServiceDeps, opts: WebhooksModuleOptions): Contribution {
  const { db, clock, config, jobs } = svc;
  const secretsKey = subkey(loadServerKey(config.secretKey, config.dataDir), 'webhook secrets');
  const policy = addressPolicy(config.webhooks.allowHosts, opts.lookup);
  const relay = deliveryRelay({ db, jobs, clock, config, onError: opts.onError });
  const deliver = webhookDeliverer({ db, clock, config, secretsKey, policy, publish: opts.publish, onFinished: relay.kick });
  return {
    schemas: webhookSchemas,
    routes: (app) => webhookRoutes(app, webhooksService(svc, { secretsKey, policy, kick: relay.kick })),
    workers: [
      {
        queue: JOBS.webhookDeliver,
        run: (data) => deliver(String(data.delivery_id), Number(data.claim)),
        concurrency: config.webhooks.workers,
      },
    ],
    loops: [relay],
    housekeeping: [(now) => pruneDeliveries(db, new Date(now.getTime() - EVENT_RETENTION_MS))],
    gauges: [
      {
        name: 'berth_webhook_deliveries',
        help: 'Webhook deliveries kept, by status.',
        labelNames: ['status'],
        read: () => deliveryCounts(db),
      },
    ],
  };
}
