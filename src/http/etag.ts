import type { FastifyReply, FastifyRequest } from 'fastify';
export const etagOf = (version: number): string => `"${version}"`;

/**
 * Sends one resource with its ETag (derived from `version`), answering a GET or HEAD with 304
 * when the client's If-None-Match already names it. A write's answer is never 304 (RFC 9110
 * §13.1.2: 304 is for GET and HEAD only; a PATCH carrying If-None-Match once answered 304, which
 * its operation does not declare).
 */
export function sendResource<T extends { version: number }>(
  request: FastifyRequest,
  reply: FastifyReply,
  resource: T,
  status = 200,
) {
  const etag = etagOf(resource.version);
  void reply.header('etag', etag);
  const inm = request.headers['if-none-match'];
  const read = request.method === 'GET' || request.method === 'HEAD';
  if (
    status === 200 &&
    read &&
    inm &&
    (inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))
  ) {
    return reply.code(304).send();
  }
  return reply.code(status).send(resource);
}

/**
 * The version the client's If-Match demands: undefined without the header (or with `*`);
 * a value that cannot match any version yields -1, which always fails (412).
 */
export function ifMatchVersion(request: FastifyRequest): number | undefined {
  const raw = request.headers['if-match'];
  if (raw === undefined || raw.trim() === '*') return undefined;
  const m = /^\s*"(\d{1,10})"\s*$/.exec(raw);
  return m ? Number(m[1]) : -1;
}
