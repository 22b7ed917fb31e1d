import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/client.js';
import { PgBossQueue } from '../../src/jobs/queue.js';
import type { DnsDriver } from '../../src/provisioning/driver.js';
import { createTestApp, eventually } from '../helpers/app.js';
import { freshDb, onPostgres } from '../helpers/db.js';

const BURST = 100;
const LIMITS = {
  max_sites: 2,
  max_domains: 2,
  max_email_accounts: BURST,
  max_email_quota_mb: 10,
  disk_quota_mb: 10_000,
  max_backups: 1,
  max_dns_records_per_domain: BURST + 10,
};

/** Apply jobs ever queued for one unit (pg-boss keeps finished jobs for days). */
async function appliesOf(
  db: { query: (q: string, p: unknown[]) => Promise<{ rows: { n: number }[] }> },
  queue: string,
  unit: string,
) {
  const r = await db.query('SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND singleton_key = $2', [queue, unit]);
  return r.rows[0]?.n ?? 0;
}

describe('one pending apply per unit', () => {
  it('a burst of 100 changes to a zone, a site and a mail domain queues one apply each, which ends in the latest state', async () => {
    const { db, drop } = await freshDb();
    // The API process runs no workers, so nothing is applied while the burst is written.
    const api = await createTestApp({ db, jobs: false, env: { BERTH_RATE_LIMIT_WRITE: '100000' } });
    try {
      const plan = await api.post('/v1/plans', { name: 'burst', ...LIMITS });
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

describe.skipIf(!onPostgres())('a change whose apply was dropped because one was waiting', () => {
  it('is applied by the waiting job, even when a worker takes that job before the change commits', async () => {
    const { db, drop } = await freshDb();
    const api = await createTestApp({ db, jobs: false });
    let worker: Awaited<ReturnType<typeof createTestApp>> | undefined;
    try {
      const plan = await api.post('/v1/plans', { name: 'race', ...LIMITS });
      const account = await api.post('/v1/accounts', {
        username: 'racer',
        contact_email: 'r@race.example.com',
        plan_id: plan.body.id,
      });
      const domain = (await api.post('/v1/domains', { account_id: account.body.id, name: 'race.com', mail_enabled: true })).body;
      // A mail apply waits for the domain (no process runs jobs yet).
      await api.post('/v1/emails', { address: `first@race.com`, password: 'correct horse battery' });
      expect(await appliesOf(db, 'mail.apply', domain.id)).toBe(1);
      const queue = new PgBossQueue(db, { runWorkers: false, onError: () => undefined });
      await queue.start();
      await db.transaction(async (tx) => {
        // A change to the unit as the services make one: the row first, then the job, which is
        // dropped since one waits. Then a worker takes the waiting job while this is uncommitted.
        await tx.query(`UPDATE mail_units SET generation = generation + 1, sync_state = 'pending' WHERE domain_id = $1`, [
          domain.id,
        ]);
        await queue.send(tx, 'mail.apply', { domain_id: domain.id, name: domain.name, account_id: domain.account_id });
        worker = await createTestApp({ db, dataDir: api.dataDir });
        await eventually(async () => {
          const r = await db.query<{ state: string }>(
            `SELECT state FROM pgboss.job WHERE name = 'mail.apply' AND singleton_key = $1`,
            [domain.id],
          );
          return r.rows.every((j) => j.state !== 'created');
        });
      });
      await queue.stop();
      expect(await appliesOf(db, 'mail.apply', domain.id)).toBe(1);
      const mailState = async () =>
        (await db.query<{ s: string }>('SELECT sync_state AS s FROM mail_units WHERE domain_id = $1', [domain.id])).rows[0]?.s;
      await eventually(async () => (await mailState()) === 'in_sync', 30_000);
    } finally {
      await worker?.close();
      await api.close();
      await db.close();
      await drop();
    }
  }, 120_000);
});

describe.skipIf(!onPostgres())('applies of one unit in two processes', () => {
  it('never overlap, and the last one renders the latest state', async () => {
    const { db, url, drop } = await freshDb();
    const other = await openDb({ databaseUrl: url, dataDir: '' });
    let inside = 0;
    let most = 0;
    let release = () => undefined as void;
    const gate = new Promise<void>((r) => (release = r));
    const serials: number[] = [];
    // One slow DNS server for both: it sees every apply of either process.
    const driver: DnsDriver = {
      name: 'slow',
      applyZone: async (zone) => {
        most = Math.max(most, ++inside);
        await gate;
        serials.push(zone.serial);
        inside--;
      },
      removeZone: async () => undefined,
    };
    const a = await createTestApp({ db, deps: { dnsDriver: driver } });
    const b = await createTestApp({ db: other, dataDir: a.dataDir, deps: { dnsDriver: driver } });
    try {
      const plan = await a.post('/v1/plans', { name: 'overlap', ...LIMITS });
      const account = await a.post('/v1/accounts', {
        username: 'overlap',
        contact_email: 'o@overlap.example.com',
        plan_id: plan.body.id,
      });
      const domain = (await a.post('/v1/domains', { account_id: account.body.id, name: 'overlap.com' })).body;
      await eventually(async () => inside === 1);
      // A change while the first apply runs: its job goes to the other process, whose worker is free.
      expect((await a.post('/v1/domains/overlap.com/records', { name: 'x', type: 'A', content: '192.0.2.9' })).status).toBe(201);
      const active = async () =>
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'dns.apply' AND state = 'active'`))
          .rows[0]?.n;
      const waiting = async () =>
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`))
          .rows[0]?.n;
      await eventually(async () => (await active()) === 2 && (inside === 2 || (await waiting()) === 1));
      expect(most).toBe(1);
      release();
      const latest = (await a.get(`/v1/domains/${domain.id}`)).body.dns.serial;
      await eventually(
        async () => serials.at(-1) === latest && (await a.get(`/v1/domains/${domain.id}`)).body.sync_state === 'in_sync',
      );
      expect(most).toBe(1);
    } finally {
      release();
      await b.close();
      await a.close();
      await other.close();
      await db.close();
      await drop();
    }
  }, 120_000);
});
