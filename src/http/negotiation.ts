import type { FastifyInstance } from 'fastify';
import { notAcceptable } from '../lib/errors.js';

const JSON_TYPES = /(^|,)\s*(\*\/\*|application\/\*|application\/json|application\/problem\+json)\s*(;|,|$)/i;

/** JSON endpoints answer 406 when the client's Accept rules out JSON altogether. */
export function installNegotiation(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const accept = request.headers.accept;
    const refused = accept && request.url.startsWith('/v1/') && !request.routeOptions.config.produces && !JSON_TYPES.test(accept);
    done(refused ? notAcceptable('This endpoint produces application/json.') : undefined);
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route that produces something other than JSON negotiates itself. */
    produces?: string;
  }
}
