import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';
import type { PageParams } from '../db/paging.js';

export const encodeCursor = (id: string): string => Buffer.from(JSON.stringify({ id }), 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { id?: unknown };
    if (typeof parsed.id === 'string' && /^[a-z]{2,4}_[0-9a-z]{26}$/.test(parsed.id)) return parsed.id;
  } catch {
    // fall through
  }
  throw new AppError('malformed_request', 'The cursor is not one this API issued.', {
    errors: [{ pointer: '/query/cursor', code: 'invalid_format', detail: 'is not a valid cursor' }],
  });
}

export function pageParams(query: { limit?: number; cursor?: string }): PageParams {
  return { limit: query.limit ?? 50, afterId: query.cursor ? decodeCursor(query.cursor) : null };
}

/**
 * Repositories fetch `limit + 1` rows newest first; this cuts the page, sets `next_cursor`
 * and the RFC 8288 `Link: <...>; rel="next"` header. Keyset paging on the id keeps pages
 * stable under concurrent inserts.
 */
export function sendPage<T extends { id: string }>(
  request: FastifyRequest,
  reply: FastifyReply,
  rows: T[],
  page: PageParams,
): { data: T[]; next_cursor: string | null } {
  const hasMore = rows.length > page.limit;
  const data = hasMore ? rows.slice(0, page.limit) : rows;
  const last = data[data.length - 1];
  const next = hasMore && last ? encodeCursor(last.id) : null;
  if (next) {
    // The request's own path and query with the cursor replaced (URLSearchParams alone: a whole URL costs more).
    const q = request.url.indexOf('?');
    const pathname = q < 0 ? request.url : request.url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : request.url.slice(q + 1));
    query.set('cursor', next);
    void reply.header('link', `<${pathname}?${query.toString()}>; rel="next"`);
  }
  return { data, next_cursor: next };
}
