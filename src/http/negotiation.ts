import type { FastifyInstance } from 'fastify';
import { AppError } from '../lib/errors.js';

const JSON_TYPES = /(^|,)\s*(\*\/\*|application\/\*|application\/json|application\/problem\+json)\s*(;|,|$)/i;

/** JSON endpoints answer 406 when the client's Accept rules out JSON altogether. */
export function installNegotiation(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const accept = request.headers.accept;
    if (!accept || !request.url.startsWith('/v1/') || request.routeOptions.config.produces) return;
    if (!JSON_TYPES.test(accept)) throw new AppError('not_acceptable', 'This endpoint produces application/json.');
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route that produces something other than JSON negotiates itself. */
    produces?: string;
  }
}
