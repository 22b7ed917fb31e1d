import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BODIES } from '../helpers/bodies.js';
import { createPlan, world } from '../helpers/fixtures.js';
import { operationsOf, urlOf, type Operation, type Schema } from '../helpers/openapi.js';

/**
 * Property-based fuzzing from the OpenAPI document: generated bad path ids, query strings,
 * bodies and headers for every operation, and the operation's own example body with one member
 * at any depth replaced: by `null` (in a merge patch, the removal of that member), by a string
 * of lone UTF-16 surrogates, or by a nasty value. Whatever is sent: never a 5xx; every error is
 * problem+json carrying the response's X-Request-Id; a refused request changes nothing.
 * Seeded and bounded; a failure prints its seed: BERTH_FUZZ_SEED=<seed> replays it.
 */
const SEED = Number(process.env.BERTH_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS_PER_OPERATION = Number(process.env.BERTH_FUZZ_RUNS ?? 12);

let t: TestApp;
let operations: Operation[];
let ids: Record<string, string>;
let tokens: string[];

beforeAll(async () => {
  // No background jobs: the state moves only through the requests themselves.
  t = await createTestApp({ jobs: false, deps: { webhookLookup: async () => [{ address: '93.184.216.34', family: 4 }] } });
  const w = await world(t);
  const plan = await createPlan(t, w.tokenA);
  const domain = (await t.post('/v1/domains', { account_id: w.accountA.id, name: `fuzz-${Date.now()}.com`, mail_enabled: true }))
    .body;
  const record = (await t.post(`/v1/domains/${domain.name}/records`, { name: 'r', type: 'A', content: '192.0.2.1' })).body;
  const email = (await t.post('/v1/emails', { address: `info@${domain.name}`, generate_password: true, quota_mb: 10 })).body;
  await t.request('PATCH', `/v1/emails/${email.id}`, {
    body: { autoresponder: { enabled: true, subject: 'Away', body: 'Back soon.' } },
  });
  const forwarder = (await t.post('/v1/email-forwarders', { address: `sales@${domain.name}`, destinations: ['x@example.org'] }))
    .body;
  const site = (await t.post('/v1/sites', { account_id: w.accountA.id, hostname: domain.name })).body;
  const database = (await t.post('/v1/databases', { account_id: w.accountA.id, name: `${w.accountA.username}_fz` })).body;
  const user = (
    await t.post('/v1/database-users', {
      account_id: w.accountA.id,
      username: `${w.accountA.username}_fz`,
      generate_password: true,
    })
  ).body;
  const webhook = (await t.post('/v1/webhooks', { url: 'https://hooks.example.com/f', event_types: ['*'] })).body;
  const schedule = (await t.post('/v1/backup-schedules', { account_id: w.accountA.id, cron: '0 4 * * *', retain: 1 })).body;
  ids = {
    resellers: w.resellerA.id,
    plans: plan.id,
    accounts: w.accountA.id,
    domains: domain.name,
    records: record.id,
    emails: email.id,
    'email-forwarders': forwarder.id,
    sites: site.id,
    databases: database.id,
    'database-users': user.id,
    users: user.id,
    webhooks: webhook.id,
    'backup-schedules': schedule.id,
  };
  tokens = [w.tokenA, w.tokenB, w.tokenAccountA, w.readOnly];
  operations = await operationsOf(t);
  // Every table's row count and, where there is one, the sum of its versions; the idempotency
  // store (a refused request's answer is kept for its key) and rate buckets are left out.
  const columns = await t.db.query<{ table_name: string; has_version: boolean }>(
    `SELECT table_name, bool_or(column_name = 'version') AS has_version FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name NOT IN ('idempotency_keys', 'rate_buckets', 'schema_migrations')
     GROUP BY table_name ORDER BY table_name`,
  );
  // A PL/pgSQL function keeps its statement's plan: planned at every call, the statement's many
  // subqueries were most of this test's time.
  const fingerprintSql = `SELECT ${columns.rows
    .map((c) => `(SELECT count(*) || ':' || ${c.has_version ? 'coalesce(sum(version), 0)' : "''"} FROM "${c.table_name}")`)
    .join(" || ' ' || ")}`;
  await t.db.query(
    `CREATE FUNCTION fuzz_fingerprint() RETURNS text LANGUAGE plpgsql AS $f$ BEGIN RETURN (${fingerprintSql}); END $f$`,
  );
  // It sees a change, as it would one made by a refusal.
  const unchanged = await fingerprint();
  expect((await t.request('PATCH', `/v1/webhooks/${webhook.id}`, { body: { description: 'fuzzed' } })).status).toBe(200);
  expect(await fingerprint()).not.toBe(unchanged);
}, 120_000);
afterAll(async () => t.close());

const fingerprint = async () => (await t.db.query<{ f: string }>('SELECT fuzz_fingerprint() AS f')).rows[0]?.f;

/**
 * Any code point but a surrogate, as fast-check's `unit: 'binary'` draws, without the table of
 * every code point that fast-check builds for that unit and keeps for the worker's life (100 MB,
 * which every later garbage collection of the worker walks through).
 */
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff - 0x800 }).map((n) => String.fromCodePoint(n < 0xd800 ? n : n + 0x800));
/** Strings a careless or hostile client sends. */
const nasty = fc.oneof(
  fc.string({ unit: anyCodePoint, maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\uFEFF', '..', '../../etc/passwd', "'; DROP TABLE accounts; --", '%00'),
  fc.constantFrom('-1', '0', '1e999', '9'.repeat(40), 'NaN', 'true', 'null', '[]', '{}', 'x'.repeat(3000)),
);
const anyJson = fc.jsonValue({ maxDepth: 3 });
/** Strings that are not text: lone UTF-16 surrogates, which JSON.stringify escapes (`\udfff`). */
const loneSurrogates = fc.constantFrom('\udfff\ud800x', '\ud800', 'a\udc00', '\udfff');
const valueFor = (schema: Schema): fc.Arbitrary<unknown> =>
  fc.oneof(anyJson, nasty, loneSurrogates, ...(schema.enum ? [fc.constantFrom(...(schema.enum as unknown[]))] : []));

/** Every path to a member of a JSON value, the value itself (`[]`) included. */
function pathsOf(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return [at, ...value.flatMap((v, i) => pathsOf(v, [...at, i]))];
  if (value && typeof value === 'object') return [at, ...Object.entries(value).flatMap(([k, v]) => pathsOf(v, [...at, k]))];
  return [at];
}

/** A copy of `value` with the member at `path` replaced. */
function replaced(value: unknown, path: (string | number)[], by: unknown): unknown {
  if (path.length === 0) return by;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[head] = replaced(copy[head], rest, by);
  return copy;
}

/** The example body with one member, at any depth, replaced by `null`, lone surrogates or a nasty value. */
const mutatedExample = (example: unknown) =>
  fc
    .tuple(fc.constantFrom(...pathsOf(example)), fc.oneof(fc.constant(null), loneSurrogates, nasty, anyJson))
    .map(([path, by]) => ({ raw: JSON.stringify(replaced(example, path, by)) }));

/** Raw path segments that are valid URL syntax but not valid text. */
const rawSegment = fc.constantFrom('%C0%AF', '%zz', '%', '%FF%FE', '.', '..', '%2e%2e', '%2F');

function requestOf(op: Operation) {
  const path = fc.record(
    Object.fromEntries(
      op.pathParams.map((p) => [
        p,
        fc.oneof(
          { weight: 2, arbitrary: fc.constant(null) },
          { weight: 2, arbitrary: nasty.map((s) => encodeURIComponent(s)) },
          { weight: 1, arbitrary: rawSegment },
        ),
      ]),
    ),
  );
  const query = fc.array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...op.queryParams.map((q) => q.name), 'unknown'), fc.string({ maxLength: 8 })),
      fc.oneof(
        nasty,
        anyJson.map((v) => JSON.stringify(v)),
      ),
    ),
    { maxLength: 4 },
  );
  const properties = Object.entries<Schema>(op.body?.schema?.properties ?? {});
  const example = op.body?.example;
  const body = fc.oneof(
    ...(example !== undefined ? [{ weight: 3, arbitrary: mutatedExample(example) }] : []),
    anyJson.map((v) => ({ raw: JSON.stringify(v) })),
    fc
      .record(Object.fromEntries(properties.map(([k, s]) => [k, valueFor(s)])), { requiredKeys: [] })
      .map((v) => ({ raw: JSON.stringify(v) })),
    nasty.map((raw) => ({ raw })),
    fc
      .constantFrom(
        '\uFEFF{}',
        '{"a":',
        '{"__proto__": {"admin": true}}',
        '{"a": 1, "a": 2}',
        `${'['.repeat(5000)}${']'.repeat(5000)}`,
        '{"name": "\\ud800"}',
      )
      .map((raw) => ({ raw })),
  );
  // Each header now and then, so most requests get past content negotiation to the handler.
  const sometimes = <T>(arb: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
  const headers = fc
    .record({
      'content-type': fc.oneof(
        { weight: 6, arbitrary: fc.constant(op.body?.types[0] ?? 'application/json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'application/merge-patch+json',
            'text/plain',
            'text/dns',
            'application/gzip',
            'application/x-www-form-urlencoded',
            'application/json; charset=latin1',
            'multipart/form-data; boundary=x',
          ),
        },
      ),
      'if-match': sometimes(fc.constantFrom('"1"', '*', 'W/"1"', '"x"', 'garbage', '"99999999999999999999"')),
      'if-none-match': sometimes(fc.constantFrom('"1"', '*', 'garbage')),
      'idempotency-key': sometimes(fc.string({ maxLength: 300 }).filter((s) => /^[\x20-\x7e]*$/.test(s))),
      accept: sometimes(fc.constantFrom('application/json', 'text/html', 'application/xml', '*/*', 'garbage')),
      'x-request-id': sometimes(fc.constantFrom('abc', 'x'.repeat(200), 'a b', 'req_123')),
      range: sometimes(fc.constantFrom('bytes=0-1', 'bytes=9-1', 'bytes=abc', 'lines=1-2')),
    })
    .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>);
  return fc.record({
    op: fc.constant(op),
    path,
    query,
    body: op.method === 'GET' || op.method === 'DELETE' ? fc.constant(null) : fc.option(body, { nil: null }),
    headers,
    token: fc.constantFrom(...tokens),
  });
}

describe('fuzzing every operation of the OpenAPI document', () => {
  it(`never a 5xx, always a problem with the request id, nothing changed by a refusal (seed ${SEED})`, async () => {
    process.stdout.write(`fuzz seed ${SEED}: replay with BERTH_FUZZ_SEED=${SEED} npx vitest run test/api/fuzz.test.ts\n`);
    const arbitrary = fc.constantFrom(...operations).chain(requestOf);
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ op, path, query, body, headers, token }) => {
        const url =
          urlOf(op, (collection, param) => path[param] ?? encodeURIComponent(ids[collection] ?? 'none')) +
          (query.length ? `?${query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}` : '');
        const before = await fingerprint();
        const { 'content-type': type, ...others } = headers;
        const r = await t.request(op.method, url, {
          token,
          raw: body?.raw,
          headers: body && type ? { ...others, 'content-type': type } : others,
        });
        const where = `${op.method} ${url} ${JSON.stringify(body?.raw ?? null).slice(0, 300)} ${JSON.stringify(headers)} → ${r.status}: ${r.text.slice(0, 300)}`;
        expect(r.status, where).toBeLessThan(500);
        expect(r.headers['x-request-id'], where).toBeTruthy();
        if (r.status >= 400) {
          expect(r.headers['content-type'], where).toMatch(/^application\/problem\+json/);
          expect(r.body?.request_id, where).toBe(r.headers['x-request-id']);
          expect(r.text, where).not.toMatch(/\bat \/|node_modules|SELECT |INSERT |UPDATE /);
          expect(await fingerprint(), where).toBe(before);
        }
      }),
      { seed: SEED, numRuns: operations.length * RUNS_PER_OPERATION, endOnFailure: true },
    );
  }, 300_000);
});

/** `value` cut to what `schema` takes: the members it names, at every depth ($refs and nullable unions followed). */
function projected(value: unknown, schema: Schema | undefined, doc: Schema): unknown {
  const resolved = (x: Schema | undefined): Schema | undefined =>
    x?.$ref ? resolved(doc.components.schemas[String(x.$ref).split('/').pop() as string]) : x;
  const s = resolved(schema);
  const object = s?.properties ? s : resolved((s?.anyOf as Schema[] | undefined)?.find((a) => resolved(a)?.properties));
  if (object?.properties && value && typeof value === 'object' && !Array.isArray(value))
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k in object.properties)
        .map(([k, v]) => [k, projected(v, object.properties[k], doc)]),
    );
  return value;
}

describe('every member of a body, at any depth', () => {
  it('as null (a merge patch removing it) or as lone UTF-16 surrogates: never a 5xx, a refusal changes nothing', async () => {
    const doc = (await t.get('/v1/openapi.json', null)).body;
    const failures: string[] = [];
    let requests = 0;
    for (const op of operations.filter((o) => o.body?.types.some((type) => type.endsWith('json')))) {
      const url = urlOf(op, (collection) => ids[collection] ?? 'none');
      const current = op.method === 'GET' || op.pathParams.length === 0 ? undefined : (await t.get(url)).body;
      // A body that gets past the schema: listed for the operation, else the resource as it is, else the example.
      const listed = BODIES[op.operationId]?.(ids);
      const base =
        listed ?? (current && !current.code ? projected(current, op.body?.schema ?? undefined, doc) : op.body?.example);
      const type = op.body?.types.find((x) => x.endsWith('json')) as string;
      for (const member of pathsOf(base).filter((p) => p.length > 0)) {
        for (const by of [null, '\udfff\ud800x']) {
          const raw = JSON.stringify(replaced(base, member, by));
          const before = await fingerprint();
          const r = await t.request(op.method, url, { raw, headers: { 'content-type': type } });
          requests++;
          const where = `${op.method} ${op.path} /${member.join('/')} = ${JSON.stringify(by)} → ${r.status}: ${r.text.slice(0, 200)}`;
          if (r.status >= 500) failures.push(where);
          else if (r.status >= 400 && (await fingerprint()) !== before) failures.push(`${where} (and changed the data)`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(200);
  }, 300_000);
});
