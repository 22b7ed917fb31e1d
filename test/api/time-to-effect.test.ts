import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';

/**
 * an effect follows its write as soon as the write commits. The job workers' polling
 * is set to ten minutes here, so every effect these tests wait for can only come from the wake
 * on commit; a missed wake fails them, however slow the machine.
 */
const NO_POLLING = { BERTH_JOB_POLL_MS: '600000' };
const ROUNDS = 12;

/** Milliseconds until check() holds, looking every few milliseconds. */
async function timeUntil(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error('no effect within the time limit');
    await new Promise((r) => setTimeout(r, 2));
  }
  return performance.now() - started;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.ceil((p / 100) * xs.length) - 1] as number;

function report(what: string, xs: number[]): number {
  const p95 = percentile(xs, 95);
  console.log(`${what}: p50 ${percentile(xs, 50).toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${xs.length} writes)`);
  return p95;
}

describe('write → effect on the embedded drivers, with polling out of the picture', () => {
  let t: TestApp;
  let accountId: string;
  beforeAll(async () => {
    t = await createTestApp({ env: NO_POLLING });
    accountId = (await createAccountOnNewPlan(t)).id;
  });
  afterAll(() => t.close());

  // Generous bounds: the goal (100 ms p95) is measured by `npm run bench`; a test on a shared
  // two-core machine only proves that no effect waits for a poll.
  const BOUND_MS = 5_000;

  it('a DNS record is in the rendered zone', async () => {
    const d = await t.post('/v1/domains', { account_id: accountId, name: 'effect-dns.com', template: 'empty' });
    expect(d.status).toBe(201);
    const zoneFile = path.join(t.dataDir, 'rendered', 'dns', 'effect-dns.com.zone');
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const content = `192.0.2.${i + 1}`;
      const started = performance.now();
      const r = await t.post('/v1/domains/effect-dns.com/records', { name: `h${i}`, type: 'A', content });
      expect(r.status).toBe(201);
      await timeUntil(async () => (await readFile(zoneFile, 'utf8').catch(() => '')).includes(content));
      times.push(performance.now() - started);
    }
    expect(report('DNS record → zone file', times)).toBeLessThan(BOUND_MS);
  });

  it('a site is active and a mailbox in sync', async () => {
    await t.post('/v1/domains', { account_id: accountId, name: 'effect-web.com', mail_enabled: true });
    const sites: number[] = [];
    const mailboxes: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      let started = performance.now();
      const site = await t.post('/v1/sites', { account_id: accountId, hostname: `s${i}.effect-web.com` });
      expect(site.status).toBe(202);
      await timeUntil(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
      sites.push(performance.now() - started);
      // Sites count against max_sites: each round removes its own.
      await t.request('DELETE', `/v1/sites/${site.body.id}`);

      started = performance.now();
      const box = await t.post('/v1/emails', { address: `m${i}@effect-web.com`, password: 'correct horse battery' });
      expect(box.status).toBe(201);
      await timeUntil(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync');
      mailboxes.push(performance.now() - started);
      await t.request('DELETE', `/v1/emails/${box.body.id}`);
    }
    expect(report('site created → active', sites)).toBeLessThan(BOUND_MS);
    expect(report('mailbox created → in_sync', mailboxes)).toBeLessThan(BOUND_MS);
  });
});

describe('wake on commit across processes', () => {
  it('a job queued by a process that runs no workers starts in another one at once', async () => {
    const { db, drop } = await freshDb();
    const api = await createTestApp({ db, jobs: false, env: NO_POLLING });
    const worker = await createTestApp({ db, dataDir: api.dataDir, env: NO_POLLING });
    try {
      const accountId = (await createAccountOnNewPlan(api)).id;
      expect((await api.post('/v1/domains', { account_id: accountId, name: 'effect-cross.com' })).status).toBe(201);
      const site = await api.post('/v1/sites', { account_id: accountId, hostname: 'effect-cross.com' });
      expect(site.status).toBe(202);
      await timeUntil(async () => (await api.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
    } finally {
      await worker.close();
      await api.close();
      await db.close();
      await drop();
    }
  });
});
