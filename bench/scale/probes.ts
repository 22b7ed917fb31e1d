/**
 * What the scale benchmark measures, shared with the test that checks each query's plan
 * (test/api/query-plans.test.ts): list pages near the start and deep in the middle, filtered
 * lists, a reseller's lists, an account with its usage, the servers with their units, and the
 * backup scheduler's scans.
 */
import type { Queryable } from '../../src/db/client.js';
import { encodeCursor } from '../../src/http/pagination.js';
import { beyondRetain, dueSchedules } from '../../src/modules/backups/schedules/repo.js';
import { scaleId, type ScaleSize } from './seed.js';

export interface Probe {
  name: string;
  path: string;
  /** Asked with a token of the reseller of the oldest accounts (seed.ts); the operator's otherwise. */
  asReseller?: true;
}

export function scaleProbes(size: ScaleSize): Probe[] {
  const domains = size.accounts * size.domainsPerAccount;
  const events = size.accounts * size.eventsPerAccount;
  const account = scaleId('acc', Math.floor(size.accounts / 2));
  const type = 'backup.completed'; // one of the seeded types (seed.ts)
  return [
    { name: 'domains, first page', path: '/v1/domains?limit=50' },
    { name: 'domains, deep page', path: `/v1/domains?limit=50&cursor=${encodeCursor(scaleId('dom', Math.floor(domains / 2)))}` },
    { name: 'domains of an account', path: `/v1/domains?limit=50&account_id=${account}` },
    { name: 'events, first page', path: '/v1/events?limit=50' },
    { name: 'events, deep page', path: `/v1/events?limit=50&cursor=${encodeCursor(scaleId('evt', Math.floor(events / 2)))}` },
    { name: 'events of an account', path: `/v1/events?limit=50&account_id=${account}` },
    { name: 'events of a type', path: `/v1/events?limit=50&type=${type}` },
    { name: 'events of an account and type', path: `/v1/events?limit=50&account_id=${account}&type=${type}` },
    { name: 'account with usage', path: `/v1/accounts/${account}` },
    { name: 'domains of a reseller', path: '/v1/domains?limit=50', asReseller: true },
    { name: 'events of a reseller', path: '/v1/events?limit=50', asReseller: true },
    { name: 'servers with unit counts', path: '/v1/servers?limit=50' },
  ];
}

/** One look of the backup scheduler for due slots, and one schedule's retention (as a backup of it completes). */
export async function scheduleScan(db: Queryable, size: ScaleSize, now = new Date()): Promise<void> {
  await dueSchedules(db, now);
  await beyondRetain(db, scaleId('bks', Math.floor(size.accounts / 2)));
}
