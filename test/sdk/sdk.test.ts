import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billing } from '../../sdk/examples/billing.js';
import {
  BerthError,
  createBerth,
  ifMatch,
  OperationFailedError,
  retryAfterMs,
  verifyWebhook,
  type Berth,
} from '../../sdk/src/index.js';
import { generateSigningSecret, signedHeaders } from '../../src/modules/webhooks/signing.js';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';
import { PLAN_LIMITS } from '../helpers/fixtures.js';

/** the SDK against a real Berth server listening on a port, as a billing system would use it. */
let t: TestApp;
let baseUrl: string;
let berth: Berth;
const unique = (p: string) => `${p}${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  berth = createBerth({ baseUrl, token: OPERATOR_TOKEN, retry: { maxDelayMs: 2_000 } });
});
afterAll(async () => t.close());

/** A plan a billing system sells. */
const newPlan = async () =>
  (await berth.POST('/v1/plans', { body: { name: unique('plan'), ...PLAN_LIMITS, features: ['ssl'] } })).data!;
const signUp = (client: Berth, planId: string, username = unique('c')) =>
  client.POST('/v1/accounts', { body: { username, plan_id: planId, contact_email: 'owner@customer.example.com' } });

describe('a billing system on the SDK', () => {
  it("the README's example: a retried sign-up makes one account; overdue suspends (twice is fine), paid unsuspends", async () => {
    const shop = billing(baseUrl, OPERATOR_TOKEN);
    const plan = await newPlan();
    const customer = { orderId: unique('o'), username: unique('shop'), email: 'owner@customer.example.com', planId: plan.id };
    const account = await shop.signUp(customer);
    expect((await shop.signUp(customer)).id).toBe(account.id);
    await shop.invoiceOverdue(account.id, '1042');
    await shop.invoiceOverdue(account.id, '1042');
    const path = { account_id: account.id };
    expect((await berth.GET('/v1/accounts/{account_id}', { params: { path } })).data).toMatchObject({ status: 'suspended' });
    await shop.invoicePaid(account.id);
    expect((await berth.GET('/v1/accounts/{account_id}', { params: { path } })).data).toMatchObject({ status: 'active' });
  });

  it('creates an account on sign-up, suspends it on non-payment, unsuspends it when paid', async () => {
    const plan = await newPlan();
    const { data: account, response } = await signUp(berth, plan.id);
    expect(response.status).toBe(201);
    expect(account).toMatchObject({ status: 'active', plan_id: plan.id });
    const suspended = (
      await berth.POST('/v1/accounts/{account_id}/suspend', {
        params: { path: { account_id: account!.id } },
        body: { reason: 'invoice 1042 unpaid' },
      })
    ).data!;
    expect(suspended).toMatchObject({ status: 'suspended', suspension: { reason: 'invoice 1042 unpaid' } });
    const back = await berth.POST('/v1/accounts/{account_id}/unsuspend', { params: { path: { account_id: account!.id } } });
    expect(back.data).toMatchObject({ status: 'active', suspension: null });
  });

  it('a POST whose answer is lost is retried with the same Idempotency-Key: one account, not two', async () => {
    const plan = await newPlan();
    const keys: string[] = [];
    let dropped = false;
    const lossy: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      if (request.method === 'POST') keys.push(request.headers.get('idempotency-key') ?? '');
      const response = await fetch(request);
      // The server acted; the client never hears of it, once.
      if (request.method === 'POST' && !dropped) {
        dropped = true;
        throw new TypeError('fetch failed: connection reset');
      }
      return response;
    };
    const client = createBerth({ baseUrl, token: OPERATOR_TOKEN, fetch: lossy, retry: { maxDelayMs: 50 } });
    const username = unique('once');
    const { data } = await signUp(client, plan.id, username);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    const matching = [];
    for await (const a of berth.list('/v1/accounts', { query: { q: username } })) matching.push(a.id);
    expect(matching).toEqual([data!.id]);
  });

  it('list() walks every page', async () => {
    const plan = await newPlan();
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await signUp(berth, plan.id)).data!.id);
    const seen = [];
    for await (const a of berth.list('/v1/accounts', { query: { plan_id: plan.id, limit: 2 } })) seen.push(a.id);
    expect(seen.sort()).toEqual(made.sort());
  });

  it('operations.wait() follows a backup to its end', async () => {
    const plan = await newPlan();
    const account = (await signUp(berth, plan.id)).data!;
    const { data: backup } = await berth.POST('/v1/backups', { body: { account_id: account.id } });
    const seen: number[] = [];
    const op = await berth.operations.wait(backup!.operation.id, { intervalMs: 100, onProgress: (o) => seen.push(o.progress) });
    expect(op).toMatchObject({ status: 'succeeded', progress: 100 });
    expect(seen.at(-1)).toBe(100);
  });

  it('operations.wait() throws OperationFailedError for an operation that was canceled', async () => {
    // No job workers: the backup stays queued until it is canceled.
    const idle = await createTestApp({ jobs: false });
    try {
      await idle.app.listen({ host: '127.0.0.1', port: 0 });
      const client = createBerth({
        baseUrl: `http://127.0.0.1:${(idle.app.server.address() as AddressInfo).port}`,
        token: OPERATOR_TOKEN,
      });
      const plan = (await client.POST('/v1/plans', { body: { name: unique('plan'), ...PLAN_LIMITS } })).data!;
      const account = (await signUp(client, plan.id)).data!;
      const { data: backup } = await client.POST('/v1/backups', { body: { account_id: account.id } });
      const waiting = client.operations.wait(backup!.operation.id, { intervalMs: 50 }).catch((e: unknown) => e);
      await client.POST('/v1/operations/{operation_id}/cancel', { params: { path: { operation_id: backup!.operation.id } } });
      const err = await waiting;
      expect(err).toBeInstanceOf(OperationFailedError);
      expect((err as OperationFailedError).operation.status).toBe('canceled');
    } finally {
      await idle.close();
    }
  });
});

describe('problems, versions and retries', () => {
  it('a refused request throws a BerthError with its code, field errors and request id', async () => {
    const err = await berth.POST('/v1/plans', { body: { name: '' } as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BerthError);
    const problem = err as BerthError;
    expect(problem.status).toBe(422);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((e) => e.pointer)).toContain('/name');
    expect(problem.requestId).toBeTruthy();
  });

  it('ifMatch() makes a write on a stale version a 412', async () => {
    const plan = await newPlan();
    const account = (await signUp(berth, plan.id)).data!;
    const path = { account_id: account.id };
    await berth.PATCH('/v1/accounts/{account_id}', { params: { path }, body: { contact_email: 'new@customer.example.com' } });
    const err = await berth
      .PATCH('/v1/accounts/{account_id}', {
        params: { path },
        headers: ifMatch(account),
        body: { contact_email: 'x@customer.example.com' },
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 412, code: 'precondition_failed' });
  });

  it('429 and 503 are retried after Retry-After; the request then succeeds', async () => {
    const answers = [
      new Response(JSON.stringify({ code: 'rate_limited' }), { status: 429, headers: { 'retry-after': '1' } }),
      new Response('', { status: 503 }),
    ];
    const sent: number[] = [];
    const busy: typeof fetch = async (input, init) => {
      sent.push(Date.now());
      return answers.shift() ?? fetch(new Request(input, init));
    };
    const client = createBerth({ baseUrl, token: OPERATOR_TOKEN, fetch: busy, retry: { maxDelayMs: 2_000 } });
    const { data } = await client.GET('/v1/me');
    expect(data).toBeDefined();
    expect(sent).toHaveLength(3);
    expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(950);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:58 GMT'))).toBe(2000);
  });

  it('sends a request given retry: false once, as it is: a streamed upload is not held to be sent again', async () => {
    const seen: Request[] = [];
    const busy: typeof fetch = async (input) => {
      seen.push(input as Request);
      return new Response(JSON.stringify({ code: 'unavailable' }), { status: 503, headers: { 'retry-after': '0' } });
    };
    const client = createBerth({ baseUrl, token: OPERATOR_TOKEN, fetch: busy });
    let built: Request | undefined;
    client.use({ onRequest: ({ request }) => void (built = request) });
    const post = client.POST as unknown as (path: string, init: Record<string, unknown>) => Promise<unknown>;
    const body = new ReadableStream({
      pull: (c) => {
        c.enqueue(new Uint8Array(16));
        c.close();
      },
    });
    const sent = post('/v1/sites/{site_id}/deployments', {
      params: { path: { site_id: 'site_01jd3x9v6ef8tb2q4w5n7k8m9p' } },
      headers: { 'content-type': 'application/gzip' },
      body,
      bodySerializer: (b: unknown) => b,
      duplex: 'half',
      retry: false,
    });
    await expect(sent).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBe(built); // not a clone, whose body is one branch of a tee that keeps the other
  });

  it('gives up after its attempts and throws the last problem', async () => {
    const always: typeof fetch = async () =>
      new Response(JSON.stringify({ code: 'unavailable', detail: 'down' }), { status: 503, headers: { 'retry-after': '0' } });
    const client = createBerth({ baseUrl, token: OPERATOR_TOKEN, fetch: always, retry: { attempts: 2 } });
    await expect(client.GET('/v1/me')).rejects.toMatchObject({ status: 503, code: 'unavailable', detail: 'down' });
  });
});

describe('webhook verification', () => {
  it("accepts Berth's signature (with either secret during a rotation) and refuses a changed body", () => {
    const [old, current] = [generateSigningSecret(), generateSigningSecret()];
    const body = JSON.stringify({ id: 'evt_1', type: 'account.created' });
    const headers = signedHeaders([current, old], 'evt_1', new Date(), body);
    expect(verifyWebhook(body, headers, old)).toEqual({ id: 'evt_1', type: 'account.created' });
    expect(verifyWebhook(body, new Headers(headers), [generateSigningSecret(), current])).toMatchObject({ id: 'evt_1' });
    expect(() => verifyWebhook(body.replace('created', 'deleted'), headers, current)).toThrow();
    expect(() => verifyWebhook(body, headers, generateSigningSecret())).toThrow();
  });
});
