import type { FastifyInstance } from 'fastify';

/**
 * CORS for browser clients (custom admin panels). Tokens travel in the Authorization header,
 * never in cookies, so allowing any origin exposes nothing a script could not already send.
 */
export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'etag, location, link, retry-after, ratelimit, ratelimit-policy, x-request-id, idempotent-replayed, deprecation, sunset',
};

export const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'access-control-allow-headers': 'authorization, content-type, idempotency-key, if-match, if-none-match, x-request-id',
  'access-control-max-age': '600',
};

/** Set as the request arrives (an error keeps the headers already set), not on the way out: no onSend hook per request. */
export function installCors(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    void reply.headers(CORS_HEADERS);
    done();
  });
}
