import type { Queryable } from '../../db/client.js';
import { newId } from '../../lib/ids.js';
import { insertDeliveries } from './deliveries-repo.js';
import { subscribedWebhooks } from './repo.js';

/**
 * The outbox: one pending delivery per subscribed endpoint, written in the transaction of the
 * event (so of the change). The relay hands due deliveries to the job queue's workers.
 */
export async function enqueueEventDeliveries(
  tx: Queryable,
  event: { id: string; type: string; accountId: string | null; resellerId: string | null },
  payload: string,
): Promise<void> {
  const webhookIds = await subscribedWebhooks(tx, event);
  await insertDeliveries(
    tx,
    webhookIds.map((webhookId) => ({
      id: newId('whd'),
      webhook_id: webhookId,
      event_id: event.id,
      event_type: event.type,
      payload,
    })),
  );
}
