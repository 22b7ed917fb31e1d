import type { EventRow } from './repo.js';

/** An event as the feed returns it and as webhooks deliver it. */
export const toEvent = (r: Omit<EventRow, 'reseller_id'>) => ({
  id: r.id,
  type: r.type,
  created_at: r.created_at,
  account_id: r.account_id,
  resource: { type: r.resource_type, id: r.resource_id, version: r.resource_version },
  data: r.data,
});
export type Event = ReturnType<typeof toEvent>;
