import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_CODES } from '../../src/http/problems.js';
import { createTestApp, eventually, type TestApp, OPERATOR_TOKEN } from '../helpers/app.js';
import { createAccountOnNewPlan } from '../helpers/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    deps: {
      // A test-only deprecated route, declared the same way real ones are.
      deprecations: new Map([
        [
          'GET /v1/_test/deprecated',
          {
            since: new Date('2026-01-01T00:00:00Z'),
            sunset: new Date('2027-01-01T00:00:00Z'),
            link: 'https://docs.example.com/migrate',
          },
        ],
      ]),
      extraRoutes: (app) => {
        app.get(
          '/v1/_test/deprecated',
          { schema: { hide: true, response: { 200: Type.Object({ ok: Type.Boolean() }) } } },
          async () => ({ ok: true }),
        );
        app.get('/v1/_test/boom', { schema: { hide: true } }, async () => {
          throw new Error('SELECT secret FROM tokens -- must never leak');
        });
      },
    },
  });
});
afterAll(async () => t.close());

describe('versions and health', () => {
  it('GET /v1 describes the version: its documents and every top-level resource', async () => {
    const r = await t.get('/v1', null);
    expect(r.status).toBe(200);
    expect(r.body.links).toEqual({ self: '/v1', openapi: '/v1/openapi.json', docs: '/docs' });
    expect(r.body.resources).toEqual(
      expect.arrayContaining(['/v1/accounts', '/v1/domains', '/v1/emails', '/v1/sites', '/v1/me']),
    );
    expect(r.body.resources).not.toContain('/v1/openapi.json');
    for (const path of r.body.resources) expect((await t.get(path)).status, path).toBe(200);
  });

  it('GET / lists versions without a token', async () => {
    const r = await t.get('/', null);
    expect(r.status).toBe(200);
    expect(r.body.versions[0]).toMatchObject({ version: 'v1', links: { openapi: '/v1/openapi.json' } });
  });

  it('an unknown version is 404 unknown_api_version listing the supported ones', async () => {
    const r = await t.get('/v2/domains', null);
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(r.body).toMatchObject({ code: 'unknown_api_version', supported_versions: ['v1'] });
  });

  it('healthz and readyz answer without authentication', async () => {
    expect((await t.get('/healthz', null)).body).toEqual({ status: 'ok' });
    expect((await t.get('/readyz', null)).body).toEqual({ status: 'ready' });
  });

  it('readyz is 503 unavailable with Retry-After while a migration is missing', async () => {
    await t.db.query(`DELETE FROM schema_migrations WHERE version = '0001_foundation'`);
    try {
      const r = await t.get('/readyz', null);
      expect(r.status).toBe(503);
      expect(r.body.code).toBe('unavailable');
      expect(r.headers['retry-after']).toBe('5');
    } finally {
      await t.db.query(`INSERT INTO schema_migrations (version) VALUES ('0001_foundation')`);
    }
  });

  it('metrics are served to operator tokens only', async () => {
    await t.get('/v1/plans');
    const r = await t.get('/metrics');
    expect(r.status).toBe(200);
    expect(r.text).toContain('berth_http_requests_total{method="GET",route="/v1/plans",status="200"}');
    expect(r.text).toContain('berth_http_request_duration_seconds_bucket');
    expect(r.text).toContain('berth_job_queue_depth{queue="dns.apply"}');
    // prom-client's process and event-loop metrics.
    expect(r.text).toContain('process_cpu_user_seconds_total');
    expect(r.text).toContain('nodejs_eventloop_lag_seconds');
    for (const unit of ['dns', 'mail', 'web']) expect(r.text).toContain(`berth_sync_errors{unit="${unit}"} 0`);
    expect((await t.get('/metrics', null)).status).toBe(401);
  });

  it('every job logs its start and its end with the queue, resource, duration, outcome and the request that caused it', async () => {
    const lines: Record<string, unknown>[] = [];
    const logged = await createTestApp({
      env: { BERTH_LOG_LEVEL: 'info' },
      deps: { logger: true, logStream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    });
    try {
      const account = await createAccountOnNewPlan(logged);
      const domain = await logged.post('/v1/domains', { account_id: account.id, name: 'logged-jobs.com' }, undefined, {
        'x-request-id': 'req-logged-1',
      });
      const ofJob = (msg: string) => lines.find((l) => l.msg === msg && l.queue === 'dns.apply' && l.resource === domain.body.id);
      const finished = await eventually(async () => ofJob('job finished'));
      expect(ofJob('job started')).toMatchObject({ request_id: 'req-logged-1' });
      expect(finished).toMatchObject({ request_id: 'req-logged-1', outcome: 'completed', duration_ms: expect.any(Number) });
      const metrics = (await logged.get('/metrics')).text;
      expect(metrics).toMatch(/berth_job_wait_seconds_count\{queue="dns.apply"\} [1-9]/);
      expect(metrics).toMatch(/berth_job_run_seconds_count\{queue="dns.apply",outcome="completed"\} [1-9]/);
    } finally {
      await logged.close();
    }
  });
});

describe('start-up', () => {
  it('registers every route without Fastify warnings', async () => {
    const warnings: string[] = [];
    const listen = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', listen);
    try {
      const fresh = await createTestApp({ jobs: false });
      await fresh.close();
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', listen);
    }
    expect(warnings.filter((w) => w.includes('Fastify'))).toEqual([]);
  });
});

describe('request ids', () => {
  it('echoes a sane X-Request-Id and repeats it in problems', async () => {
    const r = await t.get('/v1/nothing-here', null, { 'x-request-id': 'client-id-123' });
    expect(r.headers['x-request-id']).toBe('client-id-123');
    expect(r.body.request_id).toBe('client-id-123');
  });

  it('replaces an insane one with a generated req_ id', async () => {
    const r = await t.get('/', null, { 'x-request-id': 'bad id with spaces <script>' });
    expect(r.headers['x-request-id']).toMatch(/^req_[0-9a-z]{26}$/);
  });
});

describe('Fastify errors become problems', () => {
  it('unknown route: 404 not_found', async () => {
    const r = await t.get('/v1/nothing-here');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 'not_found', status: 404, title: 'Not found' });
    expect(r.body.type).toMatch(/\/problems\/not_found$/);
  });

  it('wrong method: 405 with Allow', async () => {
    const r = await t.request('PATCH', '/v1/plans');
    expect(r.status).toBe(405);
    expect(r.headers.allow).toContain('GET');
    expect(r.headers.allow).toContain('POST');
    expect(r.body.code).toBe('method_not_allowed');
  });

  it('406 when Accept rules out JSON', async () => {
    const r = await t.get('/v1/plans', undefined, { accept: 'text/html' });
    expect(r.status).toBe(406);
    expect(r.body.code).toBe('not_acceptable');
    expect((await t.get('/v1/plans', undefined, { accept: 'application/json' })).status).toBe(200);
  });

  it('a crash is 500 internal_error without stack or SQL', async () => {
    const r = await t.get('/v1/_test/boom');
    expect(r.status).toBe(500);
    expect(r.body.code).toBe('internal_error');
    expect(r.text).not.toMatch(/SELECT|secret|at .*\.ts/);
  });
});

describe('CORS', () => {
  it('answers preflights for existing paths and marks every response', async () => {
    const pre = await t.request('OPTIONS', '/v1/accounts', {
      token: null,
      headers: { origin: 'https://panel.example.com', 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(pre.headers['access-control-allow-methods']).toContain('POST');
    expect(pre.headers['access-control-allow-headers']).toContain('idempotency-key');
    expect((await t.request('OPTIONS', '/v1/nowhere', { token: null })).status).toBe(404);
    const r = await t.get('/v1/plans');
    expect(r.headers['access-control-allow-origin']).toBe('*');
    expect(r.headers['access-control-expose-headers']).toContain('ratelimit');
    // Errors too, whoever raises them: the handler (an id out of reach) or authentication.
    for (const [token, status] of [
      [OPERATOR_TOKEN, 404],
      [null, 401],
    ] as const) {
      const e = await t.get('/v1/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p', token);
      expect(e.status).toBe(status);
      expect(e.headers['access-control-allow-origin']).toBe('*');
      expect(e.headers['ratelimit-policy']).toBeDefined();
    }
  });
});

describe('problem pages', () => {
  it.each(PROBLEM_CODES)('documents %s', async (code) => {
    const r = await t.get(`/problems/${code}`, null);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/text\/html/);
    expect(r.text).toContain(code);
  });

  it('unknown problem code is a 404 problem', async () => {
    expect((await t.get('/problems/nope', null)).body.code).toBe('not_found');
  });
});

describe('deprecation', () => {
  it('a deprecated route sends Deprecation, Sunset and Link', async () => {
    const r = await t.get('/v1/_test/deprecated');
    expect(r.status).toBe(200);
    expect(r.headers.deprecation).toBe(`@${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
    expect(r.headers.sunset).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
    expect(r.headers.link).toBe('<https://docs.example.com/migrate>; rel="deprecation"; type="text/html"');
  });

  it('other routes do not', async () => {
    expect((await t.get('/v1/plans')).headers.deprecation).toBeUndefined();
  });
});

describe('OpenAPI', () => {
  it('serves a 3.1 document generated from the route schemas, with scopes', async () => {
    const r = await t.get('/v1/openapi.json', null);
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    const create = r.body.paths['/v1/accounts'].post;
    expect(create.security).toEqual([{ bearerAuth: ['accounts:write'] }]);
    expect(create.responses['201']).toBeDefined();
    expect(create.responses['422'].content['application/problem+json']).toBeDefined();
    expect(create.responses['429'].headers['Retry-After']).toBeDefined();
    expect(create.responses['201'].headers.RateLimit).toBeDefined();
    expect(r.body.paths['/v1/_test/deprecated']).toBeUndefined();
    expect(r.body.components.schemas.Account).toBeDefined();
  });

  it('/docs renders it for people, without external assets', async () => {
    const r = await t.get('/docs', null);
    expect(r.status).toBe(200);
    expect(r.headers['content-security-policy']).toMatch(/script-src 'self';/);
    expect(r.text).not.toMatch(/(src|href)="https?:\/\//);
    // Its script and icon, built with the panel (`npm ci` builds them), from this server.
    const assets = [...r.text.matchAll(/(?:src|href)="(\/panel\/assets\/[\w.-]+)"/g)].map((m) => m[1] as string);
    expect(assets.some((a) => /\/docs-[\w-]+\.js$/.test(a))).toBe(true);
    for (const asset of assets) expect((await t.get(asset, null)).status, asset).toBe(200);
    expect((await t.get('/docs/', null)).headers.location).toBe('/docs');
  });
});
