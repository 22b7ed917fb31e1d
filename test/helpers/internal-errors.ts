import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Test apps log nothing, so a 500 would leave only "The server failed to handle the request."
 * Its cause (the error, with a PostgreSQL SQLSTATE if any) goes to the test's stderr instead.
 */
export function printInternalErrors(app: FastifyInstance): void {
  const thrown = new WeakMap<FastifyRequest, Error>();
  app.addHook('onError', async (request, _reply, error) => {
    thrown.set(request, error);
  });
  app.addHook('onResponse', async (request, reply) => {
    const error = thrown.get(request);
    if (reply.statusCode !== 500 || !error) return;
    const code = (error as { code?: string }).code;
    process.stderr.write(
      `${request.method} ${request.url} answered 500${code ? ` (${code})` : ''}: ${error.stack ?? error.message}\n`,
    );
  });
}
