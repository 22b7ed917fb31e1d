import type { AttemptRow, DeliveryRow } from './deliveries-repo.js';
import type { WebhookRow } from './repo.js';
import type { Delivery, Webhook } from './schemas.js';

export const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  url: r.url,
  description: r.description,
  event_types: r.event_types,
  enabled: r.enabled,
  disabled_reason: r.disabled_reason,
  principal: {
    kind: r.principal_kind,
    id: r.principal_kind === 'account' ? r.account_id : r.principal_kind === 'reseller' ? r.reseller_id : null,
  },
  account_ids: r.account_ids,
  previous_secret_expires_at: r.previous_secret_expires_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

const toAttempt = (a: AttemptRow): Delivery['attempts'][number] => ({
  number: a.number,
  started_at: a.started_at,
  duration_ms: a.duration_ms,
  status_code: a.status_code,
  error: a.error,
  response_excerpt: a.response_excerpt,
  next_attempt_at: a.next_attempt_at,
});

export const toDelivery = (d: DeliveryRow, attempts: AttemptRow[]): Delivery => ({
  id: d.id,
  webhook_id: d.webhook_id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempt_count: d.attempt_count,
  next_attempt_at: d.status === 'pending' ? (d.next_attempt_at ?? d.updated_at) : null,
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  completed_at: d.completed_at,
  attempts: attempts.map(toAttempt),
  created_at: d.created_at,
  updated_at: d.updated_at,
  version: d.version,
});
