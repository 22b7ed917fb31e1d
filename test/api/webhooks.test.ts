import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createToken, world } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

/** Endpoints: CRUD, validation, reach and scopes, SSRF rules; delivery and its signature. */
let t: TestApp;
let rx: Receiver;
let w: Awaited<ReturnType<typeof world>>;
// Names resolve through this table: the delivery-time check is what must catch a change.
const dnsTable = new Map<string, string>([
  ['hooks.customer.example', '93.184.216.34'],
  ['receiver.test', '127.0.0.1'],
]);
// Only the receiver's name is allowed: 127.0.0.1 under any other name stays forbidden.
const url = (path: string) => rx.url(path, 'receiver.test');

beforeAll(async () => {
  rx = await startReceiver();
  t = await createTestApp({
    env: { BERTH_WEBHOOK_ALLOW_HOSTS: 'receiver.test', BERTH_WEBHOOK_RELAY_MS: '50' },
    deps: {
      webhookLookup: async (host) => {
        if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
        const address = dnsTable.get(host);
        if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        return [{ address, family: 4 }];
      },
    },
  });
  w = await world(t);
});
afterAll(async () => {
  await t.close();
  await rx.close();
});

const hook = (body: Record<string, unknown>, token?: string) =>
  t.post('/v1/webhooks', { url: url('/hook'), event_types: ['*'], ...body }, token);

describe('webhook endpoints', () => {
  it('create returns the whsec_ secret once; reads, updates and deletes follow the conventions', async () => {
    const created = await hook({ description: 'billing', event_types: ['account.created', 'account.deleted'] });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`/v1/webhooks/${created.body.id}`);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.body).toMatchObject({ enabled: true, disabled_reason: null, principal: { kind: 'operator', id: null } });

    const got = await t.get(`/v1/webhooks/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect(got.headers.etag).toBe('"1"');
    const listed = await t.get('/v1/webhooks?enabled=true');
    expect(listed.body.data.map((x: { id: string }) => x.id)).toContain(created.body.id);

    const patched = await t.request('PATCH', `/v1/webhooks/${created.body.id}`, {
      body: { description: 'renamed', enabled: false },
      headers: { 'if-match': '"1"' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ description: 'renamed', enabled: false, version: 2 });
    const stale = await t.request('PUT', `/v1/webhooks/${created.body.id}`, {
      body: { url: url('/hook'), event_types: ['*'], description: '', enabled: true },
      headers: { 'if-match': '"1"' },
    });
    expect(stale.status).toBe(412);
    const replaced = await t.request('PUT', `/v1/webhooks/${created.body.id}`, {
      body: { url: url('/other'), event_types: ['domain.created'], description: '', enabled: true },
      headers: { 'if-match': '"2"' },
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({
      url: url('/other'),
      event_types: ['domain.created'],
      description: '',
      enabled: true,
      version: 3,
    });
    expect(replaced.body.secret).toBeUndefined();

    expect((await t.request('DELETE', `/v1/webhooks/${created.body.id}`)).status).toBe(204);
    expect((await t.get(`/v1/webhooks/${created.body.id}`)).status).toBe(404);
  });

  it('refuses bad input with 422 and a pointer, changing nothing', async () => {
    const before = (await t.get('/v1/webhooks?limit=200')).body.data.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ url: 'http://hooks.customer.example/x' }, '/url'],
      [{ url: 'https://10.1.2.3/x' }, '/url'],
      [{ url: 'https://[::1]/x' }, '/url'],
      [{ url: 'https://169.254.169.254/latest/meta-data' }, '/url'],
      [{ url: 'https://100.100.100.200/' }, '/url'],
      [{ url: 'https://[::ffff:127.0.0.1]/' }, '/url'],
      [{ url: 'http://127.0.0.1/' }, '/url'],
      [{ url: 'https://user:pw@hooks.customer.example/' }, '/url'],
      [{ url: 'https://localhost/hook' }, '/url'],
      [{ url: 'not a url' }, '/url'],
      [{ event_types: ['account.exploded'] }, '/event_types/0'],
      [{ event_types: ['*', 'account.created'] }, '/event_types'],
      [{ event_types: [] }, '/event_types'],
      [{ secret: 'whsec_mine' }, '/secret'],
    ];
    for (const [body, pointer] of cases) {
      const r = await hook(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.headers['content-type']).toContain('application/problem+json');
      expect(
        r.body.errors.map((e: { pointer: string }) => e.pointer),
        JSON.stringify(body),
      ).toContain(pointer);
    }
    expect((await t.get('/v1/webhooks?limit=200')).body.data.length).toBe(before);
    // A public name that does not resolve yet is accepted: its deliveries fail until it does.
    expect((await hook({ url: 'https://not-yet.customer.example/hook' })).status).toBe(201);
    expect((await hook({ url: 'https://hooks.customer.example/hook' })).status).toBe(201);
  });

  it('is owned by its principal: 404 outside reach, 403 without the scope', async () => {
    const mine = await hook({}, w.tokenA);
    expect(mine.status).toBe(201);
    expect(mine.body.principal).toEqual({ kind: 'reseller', id: w.resellerA.id });
    expect((await t.get(`/v1/webhooks/${mine.body.id}`, w.tokenB)).status).toBe(404);
    expect((await t.get(`/v1/webhooks/${mine.body.id}`, w.tokenAccountA)).status).toBe(404);
    expect((await t.request('DELETE', `/v1/webhooks/${mine.body.id}`, { token: w.tokenB })).status).toBe(404);
    expect((await t.post(`/v1/webhooks/${mine.body.id}/test`, undefined, w.tokenB)).status).toBe(404);
    expect((await t.get(`/v1/webhooks/${mine.body.id}/deliveries`, w.tokenB)).status).toBe(404);
    expect((await t.get(`/v1/webhooks/${mine.body.id}`)).status).toBe(200);
    expect((await t.get(`/v1/webhooks/${mine.body.id}`, w.readOnly)).status).toBe(403);
    expect((await t.get('/v1/webhooks/whk_nonsense')).status).toBe(404);
    const ofAccount = await hook({}, w.tokenAccountA);
    expect(ofAccount.body.principal).toEqual({ kind: 'account', id: w.accountA.id });
    // The reseller sees its account's endpoint, as it sees the account's other resources.
    expect((await t.get(`/v1/webhooks/${ofAccount.body.id}`, w.tokenA)).status).toBe(200);
    expect((await t.get(`/v1/webhooks/${ofAccount.body.id}`, w.tokenB)).status).toBe(404);
    await t.request('DELETE', `/v1/webhooks/${mine.body.id}`);
    await t.request('DELETE', `/v1/webhooks/${ofAccount.body.id}`);
  });
});

describe('delivery', () => {
  it('signs per Standard Webhooks; the body is the event of the feed; only subscribed types in reach arrive', async () => {
    const created = await hook({ url: url('/signed'), event_types: ['account.created'] }, w.tokenA);
    const secret = created.body.secret as string;
    const mine = await createAccount(t, w.plan.id, w.tokenA);
    const theirs = await createAccount(t, w.plan.id, w.tokenB);
    await t.request('PATCH', `/v1/accounts/${mine.id}`, { body: { contact_email: 'new@customer.example.com' }, token: w.tokenA });

    const got = await eventually(async () => rx.received.find((r) => r.path === '/signed'));
    const payload = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as {
      id: string;
      type: string;
      data: { id: string };
    };
    expect(payload.type).toBe('account.created');
    expect(payload.data.id).toBe(mine.id);
    expect(got.headers['webhook-id']).toBe(payload.id);
    expect(got.headers['content-type']).toBe('application/json');
    const event = await t.get(`/v1/events/${payload.id}`);
    expect(JSON.parse(got.body)).toEqual(event.body);
    // A tampered body or another secret does not verify.
    expect(() =>
      new Webhook(secret).verify(got.body.replace(mine.id, theirs.id), got.headers as Record<string, string>),
    ).toThrow();

    const deliveries = await eventually(async () => {
      const r = await t.get(`/v1/webhooks/${created.body.id}/deliveries`, w.tokenA);
      return r.body.data[0]?.status === 'succeeded' ? r : null;
    });
    expect(deliveries.body.data).toHaveLength(1);
    expect(deliveries.body.data[0]).toMatchObject({ event_id: payload.id, event_type: 'account.created', attempt_count: 1 });
    expect(deliveries.body.data[0].attempts[0]).toMatchObject({ number: 1, status_code: 200, error: null });
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received.filter((r) => r.path === '/signed')).toHaveLength(1);
  });

  it('webhook.test goes to this endpoint only and is not in the feed; a retry sends the same event again', async () => {
    const a = await hook({ url: url('/test-a'), event_types: ['site.created'] });
    const b = await hook({ url: url('/test-b') });
    const sent = await t.post(`/v1/webhooks/${a.body.id}/test`);
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ event_type: 'webhook.test', status: 'pending' });
    expect(sent.headers.location).toBe(`/v1/webhooks/${a.body.id}/deliveries/${sent.body.id}`);
    const got = await eventually(async () => rx.received.find((r) => r.path === '/test-a'));
    expect(JSON.parse(got.body)).toMatchObject({ type: 'webhook.test', resource: { type: 'webhook', id: a.body.id } });
    expect((await t.get(`/v1/events/${sent.body.event_id}`)).status).toBe(404);
    expect(rx.received.some((r) => r.path === '/test-b')).toBe(false);

    await eventually(
      async () => (await t.get(`/v1/webhooks/${a.body.id}/deliveries/${sent.body.id}`)).body.status === 'succeeded',
    );
    const again = await t.post(`/v1/webhooks/${a.body.id}/deliveries/${sent.body.id}/retry`);
    expect(again.status).toBe(202);
    await eventually(async () => rx.received.filter((r) => r.path === '/test-a').length === 2);
    const both = rx.received.filter((r) => r.path === '/test-a');
    expect(both[1]?.headers['webhook-id']).toBe(both[0]?.headers['webhook-id']);
    const done = await eventually(async () => {
      const d = (await t.get(`/v1/webhooks/${a.body.id}/deliveries/${sent.body.id}`)).body;
      return d.status === 'succeeded' && d.attempt_count === 2 ? d : null;
    });
    expect(done.attempts).toHaveLength(2);

    await t.request('PATCH', `/v1/webhooks/${a.body.id}`, { body: { enabled: false } });
    expect((await t.post(`/v1/webhooks/${a.body.id}/test`)).status).toBe(409);
    expect((await t.post(`/v1/webhooks/${a.body.id}/deliveries/${sent.body.id}/retry`)).status).toBe(409);
    expect((await t.post(`/v1/webhooks/${b.body.id}/deliveries/${sent.body.id}/retry`)).status).toBe(404);
    await t.request('DELETE', `/v1/webhooks/${a.body.id}`);
    await t.request('DELETE', `/v1/webhooks/${b.body.id}`);
  });

  it('checks the address again at delivery time: a name that now resolves to 127.0.0.1 is not contacted', async () => {
    dnsTable.set('rebind.customer.example', '93.184.216.34');
    const created = await hook({ url: 'https://rebind.customer.example/hook', event_types: ['account.created'] });
    expect(created.status, created.text).toBe(201);
    dnsTable.set('rebind.customer.example', '127.0.0.1');
    const before = rx.received.length;
    await createAccount(t, w.plan.id);
    const d = await eventually(async () => {
      const r = await t.get(`/v1/webhooks/${created.body.id}/deliveries`);
      return r.body.data[0]?.attempt_count === 1 ? r.body.data[0] : null;
    });
    expect(d.status).toBe('pending');
    expect(d.last_error).toMatch(/^forbidden_address: rebind\.customer\.example resolves to 127\.0\.0\.1/);
    expect(d.attempts[0]).toMatchObject({ status_code: null });
    expect(rx.received.length).toBe(before);
    await t.request('DELETE', `/v1/webhooks/${created.body.id}`);
  });

  it('does not follow redirects and reads only the start of a response body', async () => {
    const created = await hook({ url: url('/moved'), event_types: ['account.created'] });
    rx.behave((r) =>
      r.path === '/moved'
        ? { status: 302, headers: { location: url('/elsewhere') } }
        : { status: 200, body: 'x'.repeat(200_000) },
    );
    const big = await hook({ url: url('/big'), event_types: ['account.created'] });
    await createAccount(t, w.plan.id);
    const moved = await eventually(
      async () => (await t.get(`/v1/webhooks/${created.body.id}/deliveries`)).body.data[0]?.attempts[0],
    );
    expect(moved.status_code).toBe(302);
    expect(moved.error).toMatch(/^redirect_not_followed: 302/);
    const large = await eventually(async () => (await t.get(`/v1/webhooks/${big.body.id}/deliveries`)).body.data[0]?.attempts[0]);
    expect(large).toMatchObject({ status_code: 200, error: null });
    expect(large.response_excerpt.length).toBe(1024);
    expect(rx.received.some((r) => r.path === '/elsewhere')).toBe(false);
    rx.behave({ status: 200 });
    await t.request('DELETE', `/v1/webhooks/${created.body.id}`);
    await t.request('DELETE', `/v1/webhooks/${big.body.id}`);
  });

  it('a token narrowed to some accounts creates an endpoint that receives only their events', async () => {
    const narrowed = await createToken(
      t,
      { principal: { kind: 'reseller', id: w.resellerA.id }, account_ids: [w.accountA.id] },
      w.tokenA,
    );
    const created = await hook({ url: url('/narrow'), event_types: ['account.updated'] }, narrowed);
    expect(created.body.account_ids).toEqual([w.accountA.id]);
    expect((await t.get(`/v1/webhooks/${created.body.id}`, narrowed)).status).toBe(200);
    const other = await createAccount(t, w.plan.id, w.tokenA);
    await t.request('PATCH', `/v1/accounts/${other.id}`, { body: { contact_email: 'x@customer.example.com' }, token: w.tokenA });
    await t.request('PATCH', `/v1/accounts/${w.accountA.id}`, {
      body: { contact_email: 'y@customer.example.com' },
      token: w.tokenA,
    });
    const got = await eventually(async () => rx.received.find((r) => r.path === '/narrow'));
    expect(JSON.parse(got.body).data.id).toBe(w.accountA.id);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received.filter((r) => r.path === '/narrow')).toHaveLength(1);
  });
});
