import type { FastifyInstance } from 'fastify';
import { newId } from '../lib/ids.js';
import { withRequestId } from '../lib/request-context.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Echoes a sane client `X-Request-Id`, otherwise generates a `req_` TypeID. */
export function genRequestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : newId('req');
}

export function installRequestId(app: FastifyInstance): void {
  // The rest of the request runs inside done(), so everything it calls knows its id.
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    withRequestId(request.id, done);
  });
}
