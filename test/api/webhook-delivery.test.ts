import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { RETRY_DELAYS_MS } from '../../src/modules/webhooks/schedule.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

/** Retries on a moved clock, disabling, rotation, timeouts, bounded concurrency, restarts. */
const ENV = { BERTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', BERTH_WEBHOOK_RELAY_MS: '50' };

const deliveriesOf = async (t: TestApp, webhookId: string) => (await t.get(`/v1/webhooks/${webhookId}/deliveries`)).body.data;

/** The signatures a consumer holding `secret` would accept for this request. */
function signedBy(secret: string, headers: Record<string, string | string[] | undefined>, body: string): boolean {
  const id = String(headers['webhook-id']);
  const at = new Date(Number(headers['webhook-timestamp']) * 1000);
  const expected = new Webhook(secret).sign(id, at, body);
  return String(headers['webhook-signature']).split(' ').includes(expected);
}

describe('retries', () => {
  let t: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
    t = await createTestApp({ env: { ...ENV, BERTH_WEBHOOK_TIMEOUT_MS: '300' } });
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  it('retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h with jitter, then disables the endpoint and says so', async () => {
    rx.behave((r) => (r.path === '/failing' ? { status: 503, body: 'down for maintenance' } : { status: 204 }));
    const failing = (await t.post('/v1/webhooks', { url: rx.url('/failing'), event_types: ['account.created'] })).body;
    const watcher = (await t.post('/v1/webhooks', { url: rx.url('/watch'), event_types: ['webhook.disabled'] })).body;
    await createAccountOnNewPlan(t);

    for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length; attempt++) {
      const d = await eventually(async () => {
        const [row] = await deliveriesOf(t, failing.id);
        return row?.attempt_count === attempt && row.status === 'pending' ? row : null;
      });
      const last = d.attempts[attempt - 1];
      expect(last).toMatchObject({ number: attempt, status_code: 503, error: 'http_status: 503' });
      expect(last.response_excerpt).toBe('down for maintenance');
      expect(last.next_attempt_at).toBe(d.next_attempt_at);
      const delay = Date.parse(d.next_attempt_at) - Date.parse(last.started_at);
      const base = RETRY_DELAYS_MS[attempt - 1] as number;
      expect(delay).toBeGreaterThanOrEqual(base * 0.9);
      expect(delay).toBeLessThanOrEqual(base * 1.1);
      // Not a moment early: a second short of the time, nothing is sent.
      t.clock.advance(Date.parse(d.next_attempt_at) - t.clock.now().getTime() - 1000);
      await new Promise((r) => setTimeout(r, 200));
      expect((await deliveriesOf(t, failing.id))[0].attempt_count).toBe(attempt);
      t.clock.advance(1000);
    }
    const failed = await eventually(async () => {
      const [row] = await deliveriesOf(t, failing.id);
      return row?.status === 'failed' ? row : null;
    });
    expect(failed).toMatchObject({ attempt_count: 8, next_attempt_at: null, last_status_code: 503 });
    expect(rx.received.filter((r) => r.path === '/failing')).toHaveLength(8);

    const endpoint = (await t.get(`/v1/webhooks/${failing.id}`)).body;
    expect(endpoint).toMatchObject({ enabled: false, disabled_reason: 'delivery_failures' });
    const events = (await t.get(`/v1/events?type=webhook.disabled&resource_id=${failing.id}`)).body.data;
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ id: failing.id, enabled: false });
    const told = await eventually(async () => rx.received.find((r) => r.path === '/watch'));
    expect(JSON.parse(told.body)).toMatchObject({ type: 'webhook.disabled', resource: { id: failing.id } });
    expect(signedBy(watcher.secret, told.headers, told.body)).toBe(true);

    // A manual retry after the endpoint is enabled again is one more attempt, nothing else.
    expect((await t.request('PATCH', `/v1/webhooks/${failing.id}`, { body: { enabled: true } })).body.disabled_reason).toBe(null);
    expect((await t.post(`/v1/webhooks/${failing.id}/deliveries/${failed.id}/retry`)).status).toBe(202);
    const retried = await eventually(async () => {
      const [row] = await deliveriesOf(t, failing.id);
      return row?.attempt_count === 9 && row.status === 'failed' ? row : null;
    });
    expect(retried.next_attempt_at).toBe(null);
    expect((await t.get(`/v1/webhooks/${failing.id}`)).body.enabled).toBe(true);
  });

  it('a timeout and a refused connection are failed attempts, retried', async () => {
    rx.behave((r) => (r.path === '/slow' ? 'hang' : { status: 200 }));
    const slow = (await t.post('/v1/webhooks', { url: rx.url('/slow'), event_types: ['account.created'] })).body;
    const closed = (await t.post('/v1/webhooks', { url: 'http://127.0.0.1:9/closed', event_types: ['account.created'] })).body;
    await createAccountOnNewPlan(t);
    const timedOut = await eventually(async () => (await deliveriesOf(t, slow.id))[0]?.attempts[0]);
    expect(timedOut.error).toMatch(/^timeout: /);
    expect(timedOut.duration_ms).toBeGreaterThanOrEqual(290);
    const refused = await eventually(async () => (await deliveriesOf(t, closed.id))[0]?.attempts[0]);
    expect(refused.error).toBe('connection_error: ECONNREFUSED');
    expect((await deliveriesOf(t, slow.id))[0].status).toBe('pending');
    rx.release();
  });
});

describe('signing secrets', () => {
  let t: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
    t = await createTestApp({ env: ENV });
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  it('after a rotation both secrets sign for 24 hours, then only the new one; neither is stored in the clear', async () => {
    const created = (await t.post('/v1/webhooks', { url: rx.url('/rot'), event_types: ['*'] })).body;
    const rotated = await t.post(`/v1/webhooks/${created.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(created.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - t.clock.now().getTime()).toBe(24 * 3600 * 1000);

    const send = async (n: number) => {
      expect((await t.post(`/v1/webhooks/${created.id}/test`)).status).toBe(202);
      return eventually(async () => rx.received.filter((r) => r.path === '/rot')[n - 1]);
    };
    const during = await send(1);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(signedBy(created.secret, during.headers, during.body)).toBe(true);
    expect(signedBy(rotated.body.secret, during.headers, during.body)).toBe(true);
    // As a consumer verifies: with either secret (the clock has not moved, so the timestamp is fresh).
    expect(() => new Webhook(created.secret).verify(during.body, during.headers as Record<string, string>)).not.toThrow();

    t.clock.advance(24 * 3600 * 1000 + 1000);
    const after = await send(2);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(signedBy(rotated.body.secret, after.headers, after.body)).toBe(true);
    expect(signedBy(created.secret, after.headers, after.body)).toBe(false);

    const stored = JSON.stringify((await t.db.query('SELECT * FROM webhooks')).rows);
    for (const secret of [created.secret, rotated.body.secret]) {
      expect(stored).not.toContain(secret.slice('whsec_'.length));
    }
    const replay = await t.post(`/v1/webhooks/${created.id}/rotate-secret`, undefined, undefined, { 'idempotency-key': 'rot-1' });
    const stillStored = JSON.stringify((await t.db.query('SELECT * FROM idempotency_keys')).rows);
    expect(stillStored).not.toContain(replay.body.secret.slice('whsec_'.length));
  });
});

describe('bounded concurrency', () => {
  let t: TestApp;
  let slowRx: Receiver;
  let fastRx: Receiver;
  beforeAll(async () => {
    slowRx = await startReceiver();
    fastRx = await startReceiver();
    t = await createTestApp({ env: { ...ENV, BERTH_WEBHOOK_CONCURRENCY_PER_ENDPOINT: '2', BERTH_WEBHOOK_CONCURRENCY: '6' } });
  });
  afterAll(async () => {
    await t.close();
    await slowRx.close();
    await fastRx.close();
  });

  it('a receiver that never answers holds two slots; other endpoints and the API carry on', async () => {
    slowRx.behave('hang');
    const slow = (await t.post('/v1/webhooks', { url: slowRx.url('/slow'), event_types: ['*'] })).body;
    const fast = (await t.post('/v1/webhooks', { url: fastRx.url('/fast'), event_types: ['*'] })).body;
    for (let i = 0; i < 6; i++) {
      await t.post(`/v1/webhooks/${slow.id}/test`);
      await t.post(`/v1/webhooks/${fast.id}/test`);
    }
    // The slow endpoint's two slots are taken by then, or soon after on a busy machine.
    await eventually(async () => fastRx.received.length === 6 && slowRx.inFlight() === 2);
    const started = performance.now();
    expect((await t.get('/v1/webhooks')).status).toBe(200);
    // Answered while both slots hang (a generous bound: CI's two cores are shared).
    expect(performance.now() - started).toBeLessThan(5000);
    expect(slowRx.maxInFlight()).toBe(2);
    const rows = (
      await t.db.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY status`,
        [slow.id],
      )
    ).rows;
    expect(Object.fromEntries(rows.map((r) => [r.status, r.n]))).toEqual({ sending: 2, pending: 4 });
    slowRx.release();
    await eventually(async () => slowRx.received.length === 6);
    expect(slowRx.maxInFlight()).toBe(2);
  });

  it('10,000 waiting deliveries stay rows: only what fits the bounds is claimed and queued', async () => {
    const dead = await startReceiver();
    dead.behave('hang');
    const hook = (await t.post('/v1/webhooks', { url: dead.url('/dead'), event_types: ['*'] })).body;
    const ids = Array.from({ length: 10_000 }, () => newId('whd'));
    await t.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, payload)
       SELECT id, $2, 'evt_' || id, 'webhook.test', '{}' FROM unnest($1::text[]) AS id`,
      [ids, hook.id],
    );
    await eventually(async () => dead.received.length >= 2);
    await new Promise((r) => setTimeout(r, 500));
    const counts = (
      await t.db.query<{ sending: number; jobs: number }>(
        `SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'sending') AS sending,
              (SELECT count(*)::int FROM pgboss.job WHERE name = 'webhook.deliver' AND state IN ('created', 'retry', 'active')) AS jobs`,
        [hook.id],
      )
    ).rows[0];
    expect(counts?.sending).toBe(2);
    expect(counts?.jobs).toBeLessThanOrEqual(6);
    expect(dead.received.length).toBe(2);
    await t.request('DELETE', `/v1/webhooks/${hook.id}`);
    await dead.close();
  });
});

describe('wake on commit', () => {
  it("an event's delivery leaves when its transaction commits, not at the relay's next look", async () => {
    const rx = await startReceiver();
    // The relay looks on its own once a minute: only the commit's NOTIFY can wake it in time.
    const t = await createTestApp({ env: { ...ENV, BERTH_WEBHOOK_RELAY_MS: '60000' } });
    try {
      await t.post('/v1/webhooks', { url: rx.url('/wake'), event_types: ['account.created'] });
      await createAccountOnNewPlan(t);
      await eventually(async () => rx.received.length === 1, 15_000);
    } finally {
      await t.close();
      await rx.close();
    }
  });
});
