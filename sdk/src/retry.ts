/** How a client retries: attempts in all, and the longest it waits between two. */
export interface RetryOptions {
  /** Attempts in all, the first included (default 4). */
  attempts?: number;
  /** The longest wait between two attempts, in ms (default 30 s); a longer `Retry-After` is cut to it. */
  maxDelayMs?: number;
}

const RETRIED_STATUS = new Set([429, 503]);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** `Retry-After` as milliseconds: seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fetch that gives every POST an `Idempotency-Key` (unless it has one) and retries 429 and 503
 * as `Retry-After` says (or with exponential backoff and jitter), and network failures of
 * requests that may be repeated: safe and idempotent methods, and POSTs, whose kept key makes the
 * server answer a repeat with the first response instead of acting twice. PATCH is not retried
 * after a network failure. A request given `retry: false` (openapi-fetch puts an option it does
 * not know on the request) is sent once.
 */
export function retryingFetch(inner: typeof fetch, o: RetryOptions = {}): (request: Request) => Promise<Response> {
  const attempts = o.attempts ?? 4;
  const maxDelayMs = o.maxDelayMs ?? 30_000;
  const backoff = (n: number) => Math.min(maxDelayMs, 250 * 2 ** n) * (0.5 + Math.random() / 2);

  return async (request: Request) => {
    if (request.method === 'POST' && !request.headers.has('idempotency-key'))
      request.headers.set('idempotency-key', crypto.randomUUID());
    // Sent once, as it is: a retry needs a copy of the body (clone() tees it), and a streamed one
    // (an upload) would be held in memory whole to be sent again.
    if ((request as Request & { retry?: unknown }).retry === false) return inner(request);
    const repeatable = SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key');
    for (let n = 0; ; n++) {
      const last = n + 1 >= attempts;
      let response: Response;
      try {
        response = await inner(request.clone());
      } catch (err) {
        if (last || !repeatable) throw err;
        await sleep(backoff(n));
        continue;
      }
      if (last || !RETRIED_STATUS.has(response.status)) return response;
      const wait = retryAfterMs(response.headers.get('retry-after'));
      await response.body?.cancel();
      await sleep(Math.min(maxDelayMs, wait ?? backoff(n)));
    }
  };
}
