import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type IdPrefix } from '../../src/lib/ids.js';
import { createTestApp, eventually, type Response, type TestApp } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { BODIES, ZONE_TEXT } from '../helpers/bodies.js';
import { createPlan, createToken, world } from '../helpers/fixtures.js';
import { operationsOf, urlOf, type Operation } from '../helpers/openapi.js';
import { ed25519KeyLine } from '../helpers/ssh-keys.js';

/**
 * Every operation of the OpenAPI document, called by principals of another tenant on resources
 * of reseller A: each answers 404 (or, for a collection, holds none of A's resources). The list
 * comes from the document, so a new route is tested the day it appears; a route that needs a
 * body to get past validation fails here until BODIES has one.
 */
let t: TestApp;
let ids: Record<string, string>;
let foreign: Record<string, string>;
let operations: Operation[];
/** An id of the same kind that exists nowhere (a domain name nobody hosts). */
const nowhereLike = (collection: string, id: string) =>
  collection === 'domains' ? `no-such-domain-${Date.now()}.com` : newId(id.slice(0, id.lastIndexOf('_')) as IdPrefix);

/** Creations that cannot name another tenant's resource: they make the caller's own. */
const OWN_ONLY = new Set(['createPlan', 'createReseller', 'createServer']);

beforeAll(async () => {
  t = await createTestApp({ deps: { webhookLookup: async () => [{ address: '93.184.216.34', family: 4 }] } });
  const w = await world(t);
  const as = (body: Record<string, unknown>) => ({ ...body });
  const post = async (url: string, body: unknown, token = w.tokenA) => {
    const r = await t.post(url, body, token);
    if (r.status >= 300) throw new Error(`${url}: ${r.status} ${r.text}`);
    return r.body;
  };
  const plan = await createPlan(t, w.tokenA);
  const domain = await post(
    '/v1/domains',
    as({ account_id: w.accountA.id, name: `reach-a-${Date.now()}.com`, mail_enabled: true }),
  );
  const record = await post(`/v1/domains/${domain.name}/records`, { name: 'r', type: 'A', content: '192.0.2.1' });
  const change = await post(`/v1/domains/${domain.name}/changes`, {
    create: [{ name: 'later', type: 'A', content: '192.0.2.3' }],
    apply_at: new Date(Date.now() + 86_400_000).toISOString(),
  });
  const email = await post('/v1/emails', { address: `info@${domain.name}`, generate_password: true, quota_mb: 10 });
  const forwarder = await post('/v1/email-forwarders', { address: `sales@${domain.name}`, destinations: ['x@example.org'] });
  const site = await post('/v1/sites', { account_id: w.accountA.id, hostname: domain.name });
  await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).body.status === 'active');
  const deployment = (
    await t.request('POST', `/v1/sites/${site.id}/deployments`, {
      raw: tarGz([{ path: 'index.html', content: 'a' }]),
      headers: { 'content-type': 'application/gzip' },
      token: w.tokenA,
    })
  ).body;
  const database = await post('/v1/databases', { account_id: w.accountA.id, name: `${w.accountA.username}_shop` });
  const databaseUser = await post('/v1/database-users', {
    account_id: w.accountA.id,
    username: `${w.accountA.username}_shop`,
    generate_password: true,
  });
  await t.request('PUT', `/v1/databases/${database.id}/users/${databaseUser.id}`, {
    body: { privileges: ['ALL'] },
    token: w.tokenA,
  });
  const backup = await post('/v1/backups', { account_id: w.accountA.id, include: ['dns'] });
  const schedule = await post('/v1/backup-schedules', { account_id: w.accountA.id, cron: '0 4 * * *', retain: 1 });
  const cronJob = await post(`/v1/accounts/${w.accountA.id}/cron-jobs`, {
    name: 'a',
    schedule: '@daily',
    command: { argv: ['true'] },
  });
  const sshKey = await post(`/v1/accounts/${w.accountA.id}/ssh-keys`, { name: 'a', public_key: ed25519KeyLine() });
  const webhook = await post('/v1/webhooks', { url: 'https://hooks.example.com/a', event_types: ['*'] });
  await post(`/v1/webhooks/${webhook.id}/test`, undefined);
  const delivery = await eventually(async () => (await t.get(`/v1/webhooks/${webhook.id}/deliveries`, w.tokenA)).body.data[0]);
  const token = (
    await t.post('/v1/tokens', { name: 'a', scopes: ['*'], principal: { kind: 'account', id: w.accountA.id } }, w.tokenA)
  ).body;
  const event = (await t.get(`/v1/events?account_id=${w.accountA.id}`, w.tokenA)).body.data[0];
  // A move needs an online target server; one that ended is enough to be reached (or not).
  const move = 'mov_01kb0000000000000000000000';
  await t.db.query(
    `INSERT INTO moves (id, account_id, reseller_id, operation_id, from_servers, to_servers, cutover, status, steps)
     VALUES ($1, $2, $3, 'op_x', '{}', '{}', 'auto', 'failed', '[]')`,
    [move, w.accountA.id, w.resellerA.id],
  );
  ids = {
    resellers: w.resellerA.id,
    servers: 'srv_00000000000000000000000000',
    plans: plan.id,
    accounts: w.accountA.id,
    tokens: token.id,
    operations: site.operation.id,
    events: event.id,
    domains: domain.name,
    records: record.id,
    changes: change.id,
    emails: email.id,
    'email-forwarders': forwarder.id,
    sites: site.id,
    deployments: deployment.id,
    backups: backup.id,
    'backup-schedules': schedule.id,
    'cron-jobs': cronJob.id,
    'ssh-keys': sshKey.id,
    moves: move,
    webhooks: webhook.id,
    deliveries: delivery.id,
    databases: database.id,
    'database-users': databaseUser.id,
    users: databaseUser.id,
  };
  foreign = {
    'reseller B': w.tokenB,
    'account of B': await createToken(t, { principal: { kind: 'account', id: w.accountB.id } }, w.tokenB),
  };
  operations = await operationsOf(t);
}, 120_000);
afterAll(async () => t.close());

/** A body that passes validation: listed, else the operator's view for a PUT, else an empty patch. */
async function bodyOf(op: Operation, url: string): Promise<{ raw?: string | Buffer; body?: unknown; type?: string }> {
  if (!op.body) return {};
  if (op.body.types.includes('text/dns')) return { raw: ZONE_TEXT, type: 'text/dns' };
  if (op.body.types.includes('application/gzip'))
    return { raw: tarGz([{ path: 'b.html', content: 'b' }]), type: 'application/gzip' };
  const listed = BODIES[op.operationId];
  if (listed) return { body: listed(ids) };
  if (op.method === 'PUT') {
    const current = (await t.get(url)).body as Record<string, unknown>;
    const fields = Object.keys(op.body.schema?.properties ?? {});
    return { body: Object.fromEntries(fields.filter((f) => f in current).map((f) => [f, current[f]])) };
  }
  return { body: {} };
}

/** Calls `url` with the body made for the real resource's url (`bodyUrl`). */
const call = async (op: Operation, url: string, token: string, bodyUrl = url) => {
  const { raw, body, type } = await bodyOf(op, bodyUrl);
  return t.request(op.method, url, {
    token,
    body,
    raw,
    headers: { ...(type ? { 'content-type': type } : {}), 'if-match': '"1"' },
  });
};

describe('every operation of the OpenAPI document, for principals of another tenant', () => {
  it('covers the document', () => {
    expect(operations.length).toBeGreaterThan(90);
  });

  it('every operation on a resource of A is a 404 not_found, like an id that does not exist', async () => {
    const failures: string[] = [];
    for (const op of operations.filter((o) => o.pathParams.length > 0)) {
      const url = urlOf(op, (collection) => ids[collection]);
      for (const [who, token] of Object.entries(foreign)) {
        const r = await call(op, url, token);
        if (r.status !== 404 || r.body?.code !== 'not_found')
          failures.push(`${who}: ${op.method} ${op.path} → ${r.status} ${r.text.slice(0, 160)}`);
      }
      // The same operation on an id that exists nowhere answers the same.
      const missing = urlOf(op, (collection) => nowhereLike(collection, ids[collection] as string));
      const r = await call(op, missing, foreign['reseller B'] as string, url);
      if (r.status !== 404) failures.push(`missing id: ${op.method} ${op.path} → ${r.status}`);
    }
    expect(failures).toEqual([]);
  });

  it('every creation that names a resource of A is refused exactly as one that names nothing', async () => {
    const failures: string[] = [];
    const nowhere = Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, nowhereLike(k, v)]));
    const answer = (r: Response) =>
      `${r.status} ${r.body?.code} ${(r.body?.errors ?? []).map((e: { pointer: string; code: string }) => `${e.pointer}:${e.code}`).join(',')}`;
    for (const op of operations.filter((o) => o.pathParams.length === 0 && o.method === 'POST')) {
      if (OWN_ONLY.has(op.operationId)) continue;
      const body = BODIES[op.operationId];
      if (!body) {
        failures.push(`${op.operationId}: no body in BODIES (or list it in OWN_ONLY)`);
        continue;
      }
      for (const [who, token] of Object.entries(foreign)) {
        const real = await t.post(op.path, body(ids), token);
        const none = await t.post(op.path, body(nowhere), token);
        if (real.status < 400 || real.status >= 500 || answer(real) !== answer(none))
          failures.push(`${who}: POST ${op.path} → ${answer(real)} (nothing: ${answer(none)})`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('every collection holds none of A’s resources, also when filtered by A’s account', async () => {
    const failures: string[] = [];
    // The local server holds every tenant's accounts (each account's `placement` names it): no tenant's secret.
    const secrets = Object.entries(ids)
      .filter(([collection]) => collection !== 'servers')
      .map(([, id]) => id);
    for (const op of operations.filter((o) => o.pathParams.length === 0 && o.method === 'GET')) {
      const filtered = op.queryParams.some((q) => q.name === 'account_id') ? `?account_id=${ids.accounts}` : '';
      for (const [who, token] of Object.entries(foreign)) {
        for (const url of [op.path, `${op.path}${filtered}`]) {
          const r = await t.get(url, token);
          const leaked = secrets.filter((id) => r.text.includes(id));
          if (r.status >= 500 || leaked.length) failures.push(`${who}: GET ${url} → ${r.status}, shows ${leaked.join(', ')}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('the headers the document declares', () => {
  it('every GET of a reachable resource sends ETag exactly when the document says so, and honours If-None-Match', async () => {
    const doc = (await t.get('/v1/openapi.json', null)).body;
    const failures: string[] = [];
    for (const op of operations.filter((o) => o.method === 'GET' && o.pathParams.length > 0)) {
      const declared = doc.paths[op.path].get;
      const url = urlOf(op, (collection) => ids[collection]);
      const r = await t.get(url);
      if (r.status !== 200) continue;
      const etag = r.headers.etag as string | undefined;
      if (Boolean(declared.responses['200'].headers?.ETag) !== Boolean(etag))
        failures.push(
          `${op.operationId}: ETag ${etag ?? 'absent'}, declared ${Boolean(declared.responses['200'].headers?.ETag)}`,
        );
      const conditional = (declared.parameters ?? []).some((p: { $ref?: string }) => p.$ref?.endsWith('/IfNoneMatch'));
      if (conditional && (await t.request('GET', url, { headers: { 'if-none-match': etag ?? '' } })).status !== 304)
        failures.push(`${op.operationId}: If-None-Match declared, no 304`);
    }
    expect(failures).toEqual([]);
  });
});
