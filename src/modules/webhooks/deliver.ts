import type { Config } from '../../config.js';
import type { Db, Queryable } from '../../db/client.js';
import { unseal } from '../../lib/sealed.js';
import type { Clock } from '../../lib/time.js';
import type { NewEvent } from '../events/index.js';
import { ForbiddenTarget, type AddressPolicy } from './address-policy.js';
import { lockDelivery, recordAttempt, startClaim, type DeliveryRow, type Outcome } from './deliveries-repo.js';
import { leaseMs } from './relay.js';
import { disableWebhook, type WebhookRow } from './repo.js';
import { toWebhook } from './representation.js';
import { nextAttemptAt } from './schedule.js';
import { postWebhook, type SendResult } from './sender.js';
import { signedHeaders } from './signing.js';

export interface DelivererDeps {
  db: Db;
  clock: Clock;
  config: Readonly<Config>;
  /** Unseals the stored signing secrets. */
  secretsKey: Buffer;
  policy: AddressPolicy;
  /** Announces `webhook.disabled` (publishing sits above this module: handed in, not imported). */
  publish: (tx: Queryable, e: NewEvent) => Promise<unknown>;
  /** Called after each attempt: a slot is free for the next delivery. */
  onFinished: () => void;
  random?: () => number;
}

/** The secrets that sign now: the current one, and the previous one inside its rotation window. */
function signingSecrets(w: WebhookRow, key: Buffer, now: Date): string[] {
  const secrets = [unseal(w.secret_sealed, key)];
  if (w.previous_secret_sealed && w.previous_secret_expires_at && Date.parse(w.previous_secret_expires_at) > now.getTime())
    secrets.push(unseal(w.previous_secret_sealed, key));
  return secrets;
}

/** The `webhook.deliver` job: one attempt of one claimed delivery. */
export function webhookDeliverer(deps: DelivererDeps) {
  const { db, clock, config, policy } = deps;

  async function send(d: DeliveryRow, w: WebhookRow, at: Date): Promise<SendResult> {
    try {
      const url = new URL(w.url);
      const target = await policy.resolve(url);
      const headers = signedHeaders(signingSecrets(w, deps.secretsKey, at), d.event_id, at, d.payload);
      return await postWebhook(url, target, headers, d.payload, config.webhooks.timeoutMs);
    } catch (err) {
      const error =
        err instanceof ForbiddenTarget
          ? `forbidden_address: ${err.message}`
          : `connection_error: ${(err as NodeJS.ErrnoException).code ?? 'could not resolve or sign'}`;
      return { statusCode: null, durationMs: 0, error, excerpt: null };
    }
  }

  function outcomeOf(d: DeliveryRow, result: SendResult, now: Date): Outcome {
    if (result.error === null) return { status: 'succeeded', next_attempt_at: null, completed_at: now };
    const next = d.automatic ? nextAttemptAt(now, d.attempt_count + 1, deps.random) : null;
    return next
      ? { status: 'pending', next_attempt_at: next, completed_at: null }
      : { status: 'failed', next_attempt_at: null, completed_at: now };
  }

  /** The last automatic attempt failed: the endpoint is disabled and `webhook.disabled` emitted. */
  async function disable(tx: Queryable, webhookId: string): Promise<void> {
    const row = await disableWebhook(tx, webhookId, 'delivery_failures');
    if (!row) return;
    await deps.publish(tx, {
      type: 'webhook.disabled',
      accountId: row.account_id,
      resellerId: row.reseller_id,
      resource: { type: 'webhook', id: row.id, version: row.version },
      data: toWebhook(row),
    });
  }

  return async function deliver(deliveryId: string, claim: number): Promise<void> {
    const startedAt = clock.now();
    const claimed = await startClaim(db, deliveryId, claim, new Date(startedAt.getTime() + leaseMs(config.webhooks.timeoutMs)));
    if (!claimed) return;
    const result = await send(claimed.delivery, claimed.webhook, startedAt);
    const now = clock.now();
    await db.transaction(async (tx) => {
      const current = await lockDelivery(tx, deliveryId);
      if (!current) return; // the endpoint was deleted meanwhile
      const stillOurs = current.claim === claim && current.status === 'sending';
      const outcome = stillOurs ? outcomeOf(current, result, now) : null;
      await recordAttempt(
        tx,
        current,
        {
          started_at: startedAt.toISOString(),
          duration_ms: result.durationMs,
          status_code: result.statusCode,
          error: result.error,
          response_excerpt: result.excerpt,
        },
        outcome,
      );
      if (outcome?.status === 'failed' && current.automatic) await disable(tx, current.webhook_id);
    });
    deps.onFinished();
  };
}
