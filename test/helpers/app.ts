import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppDeps } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Db } from '../../src/db/client.js';
import type { Clock } from '../../src/lib/time.js';
import { bootstrapOperator } from '../../src/modules/tokens/service.js';
import { freshDb } from './db.js';
import { checkResponsesAgainstDocument } from './document-checked.js';
import { printInternalErrors } from './internal-errors.js';

export const OPERATOR_TOKEN = 'test-operator-token-0123456789-abcdefghij';

/** A clock tests can move. */
export class TestClock implements Clock {
  constructor(private t = Date.now()) {}
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface Response<T = any> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: T;
  text: string;
}

interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Raw body text (sent as-is). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  config: Readonly<Config>;
  dataDir: string;
  clock: TestClock;
  request<T = any>(method: string, url: string, opts?: RequestOptions): Promise<Response<T>>;
  get<T = any>(url: string, token?: string | null, headers?: Record<string, string>): Promise<Response<T>>;
  post<T = any>(url: string, body?: unknown, token?: string | null, headers?: Record<string, string>): Promise<Response<T>>;
  put<T = any>(url: string, body?: unknown, token?: string | null, headers?: Record<string, string>): Promise<Response<T>>;
  patch<T = any>(url: string, body?: unknown, token?: string | null, headers?: Record<string, string>): Promise<Response<T>>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  db?: Db;
  dataDir?: string;
  jobs?: boolean;
  deps?: Partial<AppDeps>;
  clock?: TestClock;
}

export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const owned = opts.db ? null : await freshDb();
  const db = opts.db ?? owned!.db;
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), 'berth-test-'));
  const config = loadConfig({
    BERTH_DATA_DIR: dataDir,
    BERTH_BOOTSTRAP_TOKEN: OPERATOR_TOKEN,
    BERTH_LOG_LEVEL: 'silent',
    BERTH_JOBS: opts.jobs === false ? 'false' : 'true',
    BERTH_RATE_LIMIT_READ: '100000',
    BERTH_RATE_LIMIT_WRITE: '100000',
    BERTH_AUTH_FAILURES_PER_MINUTE: '100000',
    // A cheap argon2id: the cost is the production default's business, not the tests'.
    BERTH_MAIL_HASH_MEMORY_KIB: '1024',
    BERTH_MAIL_HASH_TIME_COST: '1',
    // Failed applies come back in a second or two, not five to ten: the tests wait on them.
    BERTH_JOB_RETRY_S: '1',
    // One sealing key for every test app, so two apps on one database read each other's secrets.
    BERTH_SECRET_KEY: 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
    ...opts.env,
  });
  await bootstrapOperator(db, OPERATOR_TOKEN);
  const clock = opts.clock ?? new TestClock();
  const app = await buildApp({ config, db, clock, logger: false, ...opts.deps });
  checkResponsesAgainstDocument(app);
  printInternalErrors(app);
  await app.ready();

  const request = async (method: string, url: string, o: RequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = { ...o.headers };
    const token = o.token === undefined ? OPERATOR_TOKEN : o.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: string | Buffer | undefined = o.raw;
    if (o.body !== undefined) {
      payload = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await app.inject({ method: method as 'GET', url, headers, payload });
    let body: unknown = undefined;
    try {
      body = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body, text: res.body };
  };

  return {
    app,
    db,
    config,
    dataDir,
    clock,
    request,
    get: (url, token, headers) => request('GET', url, { token, headers }),
    post: (url, body, token, headers) => request('POST', url, { body, token, headers }),
    put: (url, body, token, headers) => request('PUT', url, { body, token, headers }),
    patch: (url, body, token, headers) => request('PATCH', url, { body, token, headers }),
    async close() {
      await app.close();
      if (owned) {
        await owned.db.close();
        await owned.drop();
      }
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until fn returns a truthy value (for background jobs); the timeout is room for a loaded machine. */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 60_000): Promise<NonNullable<T>> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
