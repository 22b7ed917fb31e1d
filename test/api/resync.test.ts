import { describe, expect, it } from 'vitest';
import { JOBS } from '../../src/jobs/names.js';
import type { DnsDriver } from '../../src/provisioning/driver.js';
import { createTestApp, eventually } from '../helpers/app.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';

describe('apply resync', () => {
  it('an apply that used up its retries is tried again until it succeeds, with the latest state', async () => {
    let down = true;
    const applied: number[] = [];
    const driver: DnsDriver = {
      name: 'flaky',
      async applyZone(zone) {
        if (down) throw new Error('PowerDNS API unreachable (ECONNREFUSED)');
        applied.push(zone.serial);
      },
      removeZone: async () => undefined,
    };
    const t = await createTestApp({ env: { BERTH_RESYNC_MS: '200' }, deps: { dnsDriver: driver } });
    try {
      const account = await createAccountOnNewPlan(t);
      const domain = (await t.post('/v1/domains', { account_id: account.id, name: 'resync-me.com' })).body;
      await eventually(async () => (await t.get(`/v1/domains/${domain.id}`)).body.sync_state === 'error');
      // The queue's own retries are over (as after a long outage): only the resync is left.
      await t.db.query(`UPDATE pgboss.job SET state = 'failed' WHERE name = $1 AND state IN ('created', 'retry')`, [
        JOBS.dnsApply,
      ]);
      down = false;
      const synced = await eventually(async () => {
        const d = (await t.get(`/v1/domains/${domain.id}`)).body;
        return d.sync_state === 'in_sync' ? d : null;
      });
      expect(applied.at(-1)).toBe(synced.dns.serial);
    } finally {
      await t.close();
    }
  });
});
