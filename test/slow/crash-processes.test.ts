import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { create as tarCreate } from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { releaseDir, siteDir } from '../../src/layout.js';
import { emptyPostgresDb, onPostgres } from '../helpers/db.js';
import { freePort } from '../helpers/ports.js';
import { startReceiver } from '../helpers/receiver.js';
import { startServer, waitReady } from '../helpers/server-process.js';

/**
 * With real OS processes on one PostgreSQL database: a server killed with SIGKILL in
 * the middle of a backup and of a burst of webhook deliveries; a second server finishes both,
 * and nothing is made twice.
 */
const OPERATOR = 'crash-test-operator-token-0123456789abcdef';
const EVENTS = 20;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function api(port: number) {
  return async (method: string, url: string, body?: unknown, type = 'application/json') => {
    const r = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: { authorization: `Bearer ${OPERATOR}`, ...(body === undefined ? {} : { 'content-type': type }) },
      body: body === undefined ? undefined : body instanceof Buffer ? body : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
}

async function until<T>(check: () => Promise<T>, timeoutMs = 120_000): Promise<NonNullable<T>> {
  for (const started = Date.now(); ;) {
    const v = await check();
    if (v) return v;
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!onPostgres())('a server killed in the middle of its jobs', () => {
  it('leaves a backup and a burst of webhook deliveries to another server, which finishes each once', async () => {
    const db = await emptyPostgresDb();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-crash-e2e-'));
    dirs.push(dataDir);
    const rx = await startReceiver();
    let first = true;
    // While the first server lives, the consumer holds every delivery: they are in flight at the kill.
    rx.behave(() => (first ? 'hang' : { status: 200 }));
    const env = { DATABASE_URL: db.url, BERTH_BOOTSTRAP_TOKEN: OPERATOR, BERTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' };
    const portA = await freePort();
    const a = startServer(dataDir, portA, env);
    const client = new pg.Client({ connectionString: db.url });
    try {
      await waitReady(portA, a);
      const call = api(portA);
      const plan = await call('POST', '/v1/plans', {
        name: 'crash',
        max_sites: 1,
        max_domains: 1,
        max_email_accounts: 1,
        max_email_quota_mb: 10,
        disk_quota_mb: 4096,
        max_backups: 5,
        max_dns_records_per_domain: 100,
      });
      const account = (
        await call('POST', '/v1/accounts', { username: 'crashed', contact_email: 'c@crash.example.com', plan_id: plan.body.id })
      ).body;
      await call('POST', '/v1/domains', { account_id: account.id, name: 'crash-test.com', template: 'empty' });
      const site = (await call('POST', '/v1/sites', { account_id: account.id, hostname: 'crash-test.com' })).body;
      await until(async () => (await call('GET', `/v1/sites/${site.id}`)).body.status === 'active');
      const src = mkdtempSync(path.join(tmpdir(), 'berth-crash-src-'));
      dirs.push(src);
      writeFileSync(path.join(src, 'index.html'), '<p>crash</p>');
      const archive = await new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        tarCreate({ gzip: true, cwd: src }, ['.'])
          .on('data', (c: Buffer) => chunks.push(c))
          .on('end', () => resolve(Buffer.concat(chunks)))
          .on('error', reject);
      });
      const dpl = (await call('POST', `/v1/sites/${site.id}/deployments`, archive, 'application/gzip')).body;
      await until(async () => (await call('GET', `/v1/sites/${site.id}`)).body.current_deployment_id === dpl.id);
      // Enough incompressible bytes in the live release that the backup takes seconds, not milliseconds.
      const release = releaseDir(siteDir(dataDir, account.id, site.id), dpl.id);
      mkdirSync(path.join(release, 'big'));
      for (let i = 0; i < 40; i++) writeFileSync(path.join(release, 'big', `f${i}.bin`), randomBytes(4 * 1024 * 1024));

      const hook = (await call('POST', '/v1/webhooks', { url: rx.url('/crash'), event_types: ['dns.zone.changed'] })).body;
      for (let i = 0; i < EVENTS; i++)
        await call('POST', '/v1/domains/crash-test.com/records', { name: `h${i}`, type: 'A', content: '192.0.2.1' });
      await until(async () => rx.received.length > 0);
      const backup = (await call('POST', '/v1/backups', { account_id: account.id, include: ['sites'] })).body;
      await until(async () => (await call('GET', `/v1/backups/${backup.id}`)).body.status === 'running');

      a.child.kill('SIGKILL');
      await a.exited;
      await client.connect();
      const atKill = await client.query('SELECT status FROM backups WHERE id = $1', [backup.id]);
      expect(atKill.rows[0].status, 'the backup must still be running when the process dies').toBe('running');
      first = false;

      const portB = await freePort();
      const b = startServer(dataDir, portB, env);
      try {
        await waitReady(portB, b);
        const callB = api(portB);
        const done = await until(async () => {
          const r = (await callB('GET', `/v1/backups/${backup.id}`)).body;
          return r.status === 'completed' ? r : null;
        });
        const ids = () => new Set(rx.received.map((r) => String(r.headers['webhook-id'])));
        await until(async () => ids().size === EVENTS);

        // The backup: one row, one archive, one event, and the archive is the one recorded.
        expect((await callB('GET', `/v1/backups?account_id=${account.id}`)).body.data).toHaveLength(1);
        const archives = readdirSync(path.join(dataDir, 'backups')).filter((f) => f.endsWith('.tar.gz'));
        expect(archives).toEqual([`${backup.id}.tar.gz`]);
        const download = await fetch(`http://127.0.0.1:${portB}/v1/backups/${backup.id}/download`, {
          headers: { authorization: `Bearer ${OPERATOR}` },
        });
        expect(
          createHash('sha256')
            .update(Buffer.from(await download.arrayBuffer()))
            .digest('hex'),
        ).toBe(done.sha256);
        const completed = await client.query(`SELECT count(*)::int AS n FROM events WHERE type = 'backup.completed'`);
        expect(completed.rows[0].n).toBe(1);
        // The deliveries: one per event, each delivered (at least once, deduplicated by webhook-id).
        const deliveries = (await callB('GET', `/v1/webhooks/${hook.id}/deliveries?limit=200`)).body.data;
        expect(deliveries).toHaveLength(EVENTS);
        await until(async () =>
          ((await callB('GET', `/v1/webhooks/${hook.id}/deliveries?limit=200`)).body.data as { status: string }[]).every(
            (d) => d.status === 'succeeded',
          ),
        );
      } finally {
        b.child.kill('SIGTERM');
        await b.exited;
      }
    } finally {
      a.child.kill('SIGKILL');
      await client.end().catch(() => undefined);
      rx.release();
      await rx.close();
      await db.drop();
    }
  }, 300_000);
});
