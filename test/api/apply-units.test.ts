import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestApp, eventually } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';

const BURST = 100;

/** Apply jobs ever queued for one unit (pg-boss keeps finished jobs for days). */
async function appliesOf(
  db: { query: (q: string, p: unknown[]) => Promise<{ rows: { n: number }[] }> },
  queue: string,
  unit: string,
) {
  const r = await db.query('SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND singleton_key = $2', [queue, unit]);
  return r.rows[0]?.n ?? 0;
}

describe('one pending apply per unit (SPEC §14)', () => {
  it('a burst of 100 changes to a zone, a site and a mail domain queues one apply each, which ends in the latest state', async () => {
    const { db, drop } = await freshDb();
    // The API process runs no workers, so nothing is applied while the burst is written.
    const api = await createTestApp({ db, jobs: false, env: { BERTH_RATE_LIMIT_WRITE: '100000' } });
    try {
      const plan = await api.post('/v1/plans', {
        name: 'burst',
        max_sites: 2,
        max_domains: 2,
        max_email_accounts: BURST,
        max_email_quota_mb: 10,
        disk_quota_mb: 10_000,
        max_backups: 1,
        max_dns_records_per_domain: BURST + 10,
      });
      const account = await api.post('/v1/accounts', {
        username: 'burster',
        contact_email: 'b@burst.example.com',
        plan_id: plan.body.id,
      });
      const domain = await api.post('/v1/domains', { account_id: account.body.id, name: 'burst.com', mail_enabled: true });
      const site = await api.post('/v1/sites', { account_id: account.body.id, hostname: 'burst.com' });
      expect(site.status).toBe(202);
      for (let i = 0; i < BURST; i++) {
        expect((await api.post('/v1/domains/burst.com/records', { name: `h${i}`, type: 'A', content: '192.0.2.1' })).status).toBe(
          201,
        );
        expect((await api.post('/v1/emails', { address: `m${i}@burst.com`, password: 'correct horse battery' })).status).toBe(
          201,
        );
      }
      for (let i = 0; i < BURST; i++) {
        const aliases = [`a${i}.burst.com`];
        const r = await api.request('PATCH', `/v1/sites/${site.body.id}`, { body: { aliases } });
        expect(r.status).toBe(200);
      }
      expect(await appliesOf(db, 'dns.apply', domain.body.id)).toBe(1);
      expect(await appliesOf(db, 'mail.apply', domain.body.id)).toBe(1);
      // The site's provisioning queues the first web apply when it runs.
      expect(await appliesOf(db, 'web.apply', site.body.id)).toBe(1);

      const worker = await createTestApp({ db, dataDir: api.dataDir });
      try {
        const rendered = (...p: string[]) => readFile(path.join(api.dataDir, 'rendered', ...p), 'utf8').catch(() => '');
        await eventually(async () => (await rendered('dns', 'burst.com.zone')).includes(`h${BURST - 1}`));
        await eventually(async () =>
          (await rendered('web', 'sites', `${site.body.id}.conf`)).includes(`a${BURST - 1}.burst.com`),
        );
        await eventually(async () =>
          (await rendered('mail', 'domains', 'burst.com', 'passwd')).includes(`m${BURST - 1}@burst.com`),
        );
        const zone = await rendered('dns', 'burst.com.zone');
        for (let i = 0; i < BURST; i++) expect(zone).toContain(`h${i}\t`);
        expect(await rendered('web', 'sites', `${site.body.id}.conf`)).not.toContain(`a${BURST - 2}.burst.com`);
        expect(await appliesOf(db, 'dns.apply', domain.body.id)).toBe(1);
        expect(await appliesOf(db, 'mail.apply', domain.body.id)).toBe(1);
      } finally {
        await worker.close();
      }
    } finally {
      await api.close();
      await db.close();
      await drop();
    }
  }, 300_000);
});
