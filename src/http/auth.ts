import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Caller, CallerResolver } from '../auth/caller.js';
import { grants, type Scope } from '../auth/scopes.js';
import { insufficientScope, rateLimited, unauthenticated } from '../lib/errors.js';
import { rateLimitHeaders, type BucketStore, type Charge, type Policy } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: no token needed. Routes under /v1/ and routes with a scope need one by default. */
    auth?: boolean;
    /** The scope the operation needs; checked after reach (404 before 403). */
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

/** `then` for a value that may or may not be a promise: synchronous when it is not. */
function settle<T, R>(value: T | Promise<T>, then: (v: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(then) : then(value);
}

const UNAUTHENTICATED_HEADERS = { 'www-authenticate': 'Bearer realm="berth", error="invalid_token"' };

/** The authenticated caller of a route that requires one. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw unauthenticated('Authentication required.', UNAUTHENTICATED_HEADERS);
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

  const limited = (policy: Policy, charge: Charge, message: string) =>
    rateLimited(policy.name, message, {
      ...rateLimitHeaders(policy, charge),
      'retry-after': String(charge.retryAfterSeconds),
    });

  /** Charges the bucket; its headers go on the reply at once, so that every answer carries them. */
  function limit(reply: FastifyReply, key: string, policy: Policy): void | Promise<void> {
    return settle(opts.buckets.charge(`${policy.name}:${key}`, policy), (charge) => {
      if (!charge.allowed) throw limited(policy, charge, `Rate limit "${policy.name}" exceeded.`);
      void reply.headers(rateLimitHeaders(policy, charge));
    });
  }

  /**
   * Refuses a request without a valid token. Failures are counted per address and slowed down,
   * never locked out; a request that authenticates is never throttled by them (behind a proxy or
   * NAT one client's bad tokens would otherwise shut out every other client at that address).
   */
  async function refuse(request: FastifyRequest, secret: string | null): Promise<never> {
    const failures = opts.policies.authFailures;
    const charge = await opts.buckets.charge(`${failures.name}:ip:${request.ip}`, failures);
    if (!charge.allowed) throw limited(failures, charge, 'Too many failed authentication attempts from this address.');
    throw unauthenticated(
      secret ? 'The token is invalid, expired, revoked or not allowed from this address.' : 'Send Authorization: Bearer <token>.',
      { ...UNAUTHENTICATED_HEADERS, ...rateLimitHeaders(failures, charge) },
    );
  }

  /** At most `concurrent` requests in flight per token (in this process). */
  function holdSlot(tokenId: string, reply: FastifyReply): void {
    const running = inFlight.get(tokenId) ?? 0;
    if (running >= opts.concurrent) {
      throw rateLimited('concurrent', `More than ${opts.concurrent} requests in flight for this token.`, { 'retry-after': '1' });
    }
    inFlight.set(tokenId, running + 1);
    reply.raw.once('close', () => {
      const n = (inFlight.get(tokenId) ?? 1) - 1;
      if (n <= 0) inFlight.delete(tokenId);
      else inFlight.set(tokenId, n);
    });
  }

  function admitCaller(request: FastifyRequest, reply: FastifyReply, caller: Caller, policy: Policy): void | Promise<void> {
    request.caller = caller;
    return settle(limit(reply, `tok:${caller.tokenId}`, policy), () => holdSlot(caller.tokenId, reply));
  }

  /** Authentication, then the rate limit; without a promise when the token is cached and the buckets in memory. */
  function admit(request: FastifyRequest, reply: FastifyReply): void | Promise<void> {
    const { config, url } = request.routeOptions;
    const policy = request.method === 'GET' || request.method === 'HEAD' ? opts.policies.read : opts.policies.write;
    const needsToken = config.auth !== false && url !== undefined && (url.startsWith('/v1/') || config.scope !== undefined);
    if (!needsToken) return config.rateLimit === false ? undefined : limit(reply, `ip:${request.ip}`, policy);
    const secret = bearer(request);
    return settle(secret ? opts.resolver.resolve(secret, request.ip) : null, (caller) =>
      caller ? admitCaller(request, reply, caller, policy) : refuse(request, secret),
    );
  }

  app.addHook('onRequest', (request, reply, done) => {
    let admitted: void | Promise<void>;
    try {
      admitted = admit(request, reply);
    } catch (err) {
      return done(err as Error);
    }
    if (admitted) admitted.then(() => done(), done);
    else done();
  });

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
