import createClient, { type Client } from 'openapi-fetch';
import { BerthError, OperationFailedError } from './errors.js';
import { retryingFetch, type RetryOptions } from './retry.js';
import type { paths } from './schema.js';

export interface BerthOptions {
  /** Where the API is, e.g. `https://api.hosting.example` (no `/v1`). */
  baseUrl: string;
  /** A token (`berth_…`): sent as `Authorization: Bearer`. */
  token: string;
  retry?: RetryOptions;
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch;
  /** Sent as `User-Agent` where the runtime allows it (not in browsers). */
  userAgent?: string;
}

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type ListBody = { data: unknown[]; next_cursor: string | null };
/** The paths whose GET answers a page: `{data, next_cursor}`. */
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 200: infer R } } } ? (Json<R> extends ListBody ? P : never) : never;
}[keyof paths];
type ListQuery<P extends ListPath> = paths[P]['get'] extends { parameters: { query?: infer Q } }
  ? Omit<NonNullable<Q>, 'cursor'>
  : never;
type ListPathParams<P extends ListPath> = paths[P]['get'] extends { parameters: { path?: infer A } } ? A : never;
/** One item of the list at `P`. */
export type ListItem<P extends ListPath> = Json<paths[P]['get']['responses'][200]> extends { data: (infer I)[] } ? I : never;
export type Operation = Json<paths['/v1/operations/{operation_id}']['get']['responses'][200]>;

/** `If-Match` for a resource read earlier: the write is refused (412) if it changed since. */
export const ifMatch = (resource: { version: number }) => ({ 'If-Match': `"${resource.version}"` });

/**
 * A Berth client: `GET`/`POST`/`PUT`/`PATCH`/`DELETE` typed by the OpenAPI document (every path,
 * body and response), which resolve to `{data, response}` and throw a `BerthError` for every
 * problem; POSTs carry an `Idempotency-Key` kept across their retries; 429/503 are retried as
 * `Retry-After` says. `list()` walks every page, `operations.wait()` follows asynchronous work.
 */
export function createBerth(o: BerthOptions) {
  const send = retryingFetch(o.fetch ?? globalThis.fetch, o.retry);
  const client: Client<paths> = createClient<paths>({
    baseUrl: o.baseUrl.replace(/\/+$/, ''),
    fetch: send,
    headers: { authorization: `Bearer ${o.token}`, ...(o.userAgent ? { 'user-agent': o.userAgent } : {}) },
  });
  client.use({
    async onResponse({ response }) {
      if (response.status >= 400) throw await BerthError.from(response);
      return undefined;
    },
  });

  /** Every item of a list, page after page (following `next_cursor`), as they are needed. */
  async function* list<P extends ListPath>(
    path: P,
    params: { query?: ListQuery<P>; path?: ListPathParams<P> } = {},
  ): AsyncGenerator<ListItem<P>> {
    let cursor: string | undefined;
    do {
      const get = client.GET as (p: string, init: unknown) => Promise<{ data?: ListBody }>;
      const { data } = await get(path, {
        params: { path: params.path, query: { ...params.query, ...(cursor ? { cursor } : {}) } },
      });
      for (const item of data?.data ?? []) yield item as ListItem<P>;
      cursor = data?.next_cursor ?? undefined;
    } while (cursor);
  }

  const operations = {
    /**
     * Resolves with the operation once it succeeded; throws `OperationFailedError` once it failed
     * or was canceled, and an Error after `timeoutMs` (default 10 minutes). `onProgress` sees the
     * operation at each look (its `progress`, for a bar).
     */
    async wait(
      id: string,
      w: { timeoutMs?: number; intervalMs?: number; onProgress?: (op: Operation) => void } = {},
    ): Promise<Operation> {
      const until = Date.now() + (w.timeoutMs ?? 600_000);
      for (;;) {
        const { data } = await client.GET('/v1/operations/{operation_id}', { params: { path: { operation_id: id } } });
        const op = data as Operation;
        w.onProgress?.(op);
        if (op.status === 'succeeded') return op;
        if (op.status === 'failed' || op.status === 'canceled') throw new OperationFailedError(op);
        if (Date.now() > until) throw new Error(`operation ${id} still ${op.status} after ${w.timeoutMs ?? 600_000} ms`);
        await new Promise((resolve) => setTimeout(resolve, w.intervalMs ?? 500));
      }
    },
  };

  return Object.assign(client, { list, operations });
}
export type Berth = ReturnType<typeof createBerth>;
