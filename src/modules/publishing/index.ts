import type { Queryable } from '../../db/client.js';
import { recordEvent, toEvent, type NewEvent } from '../events/index.js';
import { enqueueEventDeliveries } from '../webhooks/index.js';

/**
 * Publishes what a change did: the event in the feed and one pending delivery per subscribed
 * webhook endpoint (the outbox), in the transaction of the change. Above both modules, so
 * neither knows the other's tables; every module that announces a change calls this.
 */
export async function publishEvent(tx: Queryable, e: NewEvent): Promise<string> {
  const row = await recordEvent(tx, e);
  await enqueueEventDeliveries(tx, { ...e, id: row.id }, JSON.stringify(toEvent(row)));
  return row.id;
}

/** An account's resource as its events name it. */
interface OwnedRow {
  id: string;
  account_id: string;
  reseller_id: string | null;
  version: number;
}

/** The event of a change to an account's resource (`<type>.<action>` in the caller's words), showing `data`. */
export const publishResourceEvent = (tx: Queryable, type: string, resource: string, row: OwnedRow, data: unknown) =>
  publishEvent(tx, {
    type,
    accountId: row.account_id,
    resellerId: row.reseller_id,
    resource: { type: resource, id: row.id, version: row.version },
    data,
  });
