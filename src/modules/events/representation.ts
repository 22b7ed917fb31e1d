import type { EventRow } from './repo.js';
import type { Event } from './schemas.js';

/** An event as the feed returns it and as webhooks deliver it. */
export const toEvent = (r: Omit<EventRow, 'reseller_id'>): Event => ({
  id: r.id,
  type: r.type,
  created_at: r.created_at,
  account_id: r.account_id,
  resource: { type: r.resource_type, id: r.resource_id, version: r.resource_version },
  data: r.data,
});
