import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Target } from './address-policy.js';

export interface SendResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The start of the response body, for the delivery log. */
  excerpt: string | null;
}

/** Bytes of a response body read at most: the rest is never read. */
const RESPONSE_CAP_BYTES = 1024;

/** Connects to the vetted address whatever the name resolves to now (no DNS rebinding). */
const pinned =
  (target: Target): LookupFunction =>
  (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: unknown[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };

/**
 * POSTs a signed body. A 2xx is success; a redirect is not followed; the whole exchange
 * (connect, headers, the first RESPONSE_CAP_BYTES of the body) must finish within timeoutMs.
 * Never throws: the outcome is the result.
 */
export function postWebhook(
  url: URL,
  target: Target,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<SendResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ ...r, durationMs: Math.round(performance.now() - started) });
    };
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'POST',
      agent: false,
      lookup: pinned(target),
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'Berth-Webhooks/1',
      },
    });
    const timer = setTimeout(
      () => finish({ statusCode: null, error: `timeout: no complete response within ${timeoutMs} ms`, excerpt: null }),
      timeoutMs,
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({ statusCode: null, error: `connection_error: ${err.code ?? err.message}`, excerpt: null }),
    );
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_CAP_BYTES).toString('utf8');
        const ok = status >= 200 && status < 300;
        const error = ok
          ? null
          : status >= 300 && status < 400
            ? `redirect_not_followed: ${status} to ${String(res.headers.location ?? '')}`.slice(0, 500)
            : `http_status: ${status}`;
        finish({ statusCode: status, error, excerpt: excerpt || null });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_CAP_BYTES) done();
      });
      res.on('end', done);
      res.on('error', done);
      res.on('close', done);
    });
    req.end(body);
  });
}
