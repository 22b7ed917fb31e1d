import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PageParams } from '../db/paging.js';
import { malformed } from '../lib/errors.js';

export const encodeCursor = (id: string): string => Buffer.from(JSON.stringify({ id }), 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { id?: unknown };
    if (typeof parsed.id === 'string' && /^[a-z]{2,4}_[0-9a-z]{26}$/.test(parsed.id)) return parsed.id;
  } catch {
    // fall through
  }
  throw malformed('The cursor is not one this API issued.', [
    { pointer: '/query/cursor', code: 'invalid_format', detail: 'is not a valid cursor' },
  ]);
}

export function pageParams(query: { limit?: number; cursor?: string }): PageParams {
  return { limit: query.limit ?? 50, afterId: query.cursor ? decodeCursor(query.cursor) : null };
}

/** A query of names and values that need no escaping, as most are (limit=50&status=active). */
const PLAIN_QUERY = /^[\w.~=&+-]*$/;

/**
 * The request's own path and query with the cursor set. A plain query with no cursor (a first
 * page, as a rule) gets it appended as sent (a cursor is base64url: nothing to escape); any other
 * goes through URLSearchParams, which escapes what the Link header must not carry raw (`>`, `"`),
 * a few microseconds more a page.
 */
export function withCursor(url: string, cursor: string): string {
  const q = url.indexOf('?');
  if (q < 0) return `${url}?cursor=${cursor}`;
  const query = url.slice(q + 1);
  if (PLAIN_QUERY.test(query) && !query.includes('cursor')) return `${url}${query === '' ? '' : '&'}cursor=${cursor}`;
  const params = new URLSearchParams(query);
  params.set('cursor', cursor);
  return `${url.slice(0, q)}?${params.toString()}`;
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
  if (next) void reply.header('link', `<${withCursor(request.url, next)}>; rel="next"`);
  return { data, next_cursor: next };
}
