import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Caller, CallerResolver } from '../auth/caller.js';
import { grants, type Scope } from '../auth/scopes.js';
import { AppError } from '../lib/errors.js';
import { rateLimitHeaders, type BucketStore, type Charge, type Policy } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: no token needed. Routes under /v1/ and routes with a scope need one by default. */
    auth?: boolean;
    /** The scope the operation needs; checked after reach (SPEC §2: 404 before 403). */
    scope?: Scope;
    /** Throws not_found when the addressed resource is outside the caller's reach. */
    reach?: (request: FastifyRequest) => Promise<unknown>;
    /** false: no rate limit (liveness and readiness probes). */
    rateLimit?: boolean;
  }
  interface FastifyRequest {
    caller: Caller | null;
  }
}

export interface AuthOptions {
  resolver: CallerResolver;
  buckets: BucketStore;
  policies: { read: Policy; write: Policy; authFailures: Policy };
  concurrent: number;
}

const UNAUTHENTICATED_HEADERS = { 'www-authenticate': 'Bearer realm="berth", error="invalid_token"' };

/** The authenticated caller of a route that requires one. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new AppError('unauthenticated', 'Authentication required.', {}, UNAUTHENTICATED_HEADERS);
  return request.caller;
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const m = /^Bearer[ ]+([\x21-\x7e]{1,512})[ ]*$/i.exec(header);
  return m?.[1] ?? null;
}

/**
 * Authentication, rate limits and scope checks for every route: a route opts out with
 * `config.auth: false`, never by re-implementing them.
 */
export function installAuth(app: FastifyInstance, opts: AuthOptions): void {
  const inFlight = new Map<string, number>();
  app.decorateRequest('caller', null);

  const rateLimited = (policy: Policy, charge: Charge, message: string) =>
    new AppError(
      'rate_limited',
      message,
      { policy: policy.name },
      {
        ...rateLimitHeaders(policy, charge),
        'retry-after': String(charge.retryAfterSeconds),
      },
    );

  /** Charges the caller's bucket; the headers go on the response whatever its status. */
  async function limit(request: FastifyRequest, key: string, policy: Policy): Promise<void> {
    const charge = await opts.buckets.charge(`${policy.name}:${key}`, policy);
    if (!charge.allowed) throw rateLimited(policy, charge, `Rate limit "${policy.name}" exceeded.`);
    request.raw.rateLimitHeaders = rateLimitHeaders(policy, charge);
  }

  /**
   * Resolves the bearer token. Failures are counted per address and slowed down, never locked
   * out; a request that authenticates is never throttled by them (behind a proxy or NAT one
   * client's bad tokens would otherwise shut out every other client at that address).
   */
  async function authenticate(request: FastifyRequest): Promise<Caller> {
    const secret = bearer(request);
    const caller = secret ? await opts.resolver.resolve(secret, request.ip) : null;
    if (caller) return caller;
    const failures = opts.policies.authFailures;
    const charge = await opts.buckets.charge(`${failures.name}:ip:${request.ip}`, failures);
    if (!charge.allowed) throw rateLimited(failures, charge, 'Too many failed authentication attempts from this address.');
    throw new AppError(
      'unauthenticated',
      secret ? 'The token is invalid, expired, revoked or not allowed from this address.' : 'Send Authorization: Bearer <token>.',
      {},
      { ...UNAUTHENTICATED_HEADERS, ...rateLimitHeaders(failures, charge) },
    );
  }

  /** At most `concurrent` requests in flight per token (in this process). */
  function holdSlot(tokenId: string, reply: FastifyReply): void {
    const running = inFlight.get(tokenId) ?? 0;
    if (running >= opts.concurrent) {
      throw new AppError(
        'rate_limited',
        `More than ${opts.concurrent} requests in flight for this token.`,
        { policy: 'concurrent' },
        { 'retry-after': '1' },
      );
    }
    inFlight.set(tokenId, running + 1);
    reply.raw.once('close', () => {
      const n = (inFlight.get(tokenId) ?? 1) - 1;
      if (n <= 0) inFlight.delete(tokenId);
      else inFlight.set(tokenId, n);
    });
  }

  app.addHook('onRequest', async (request, reply) => {
    const { config, url } = request.routeOptions;
    const policy = request.method === 'GET' || request.method === 'HEAD' ? opts.policies.read : opts.policies.write;
    const needsToken = config.auth !== false && url !== undefined && (url.startsWith('/v1/') || config.scope !== undefined);
    if (!needsToken) {
      if (config.rateLimit !== false) await limit(request, `ip:${request.ip}`, policy);
      return;
    }
    request.caller = await authenticate(request);
    await limit(request, `tok:${request.caller.tokenId}`, policy);
    holdSlot(request.caller.tokenId, reply);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const headers = request.raw.rateLimitHeaders;
    if (headers) void reply.headers(headers);
    done(null, payload);
  });

  const insufficientScope = (scope: Scope) =>
    new AppError('insufficient_scope', `This token lacks the scope ${scope}.`, { scope });
  // Synchronous unless the scope is missing and the route checks reach first (404 before 403).
  app.addHook('preHandler', (request, _reply, done) => {
    const { scope, reach } = request.routeOptions.config;
    if (!scope || !request.caller || grants(request.caller.scopes, scope)) return done();
    if (!reach) return done(insufficientScope(scope));
    void reach(request).then(
      () => done(insufficientScope(scope)),
      (err: Error) => done(err),
    );
  });
}

declare module 'node:http' {
  interface IncomingMessage {
    rateLimitHeaders?: Record<string, string>;
  }
}
