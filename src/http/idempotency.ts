import { createHash, createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/client.js';
import { idempotencyKeyInUse, idempotencyKeyReused, malformed } from '../lib/errors.js';
import { seal, unseal } from '../lib/sealed.js';
import type { Clock } from '../lib/time.js';

const TTL_MS = 24 * 60 * 60 * 1000;
/** No request runs this long; a claim this old belongs to a process that died. */
const ABANDONED_AFTER_MS = 5 * 60 * 1000;
export const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
const REPLAYED_HEADERS = ['content-type', 'location', 'etag'];

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: { principal: string; key: string; secret: Buffer } | null;
  }
}

function parseKey(raw: string): string {
  const key = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (!KEY_PATTERN.test(key)) {
    throw malformed('Idempotency-Key must be 1-255 printable ASCII characters.', [
      { pointer: '/headers/idempotency-key', code: 'invalid_format', detail: 'must be 1-255 printable ASCII characters' },
    ]);
  }
  return key;
}

/**
 * Stored responses may hold one-time secrets (a generated password, a token), so nothing that
 * could reveal them is kept in the clear: the key is stored as its SHA-256, the response is
 * sealed with AES-256-GCM under a key derived from the client's Idempotency-Key, and the
 * request fingerprint is an HMAC under the same key. Only the client that holds the key can
 * have the response replayed; the database alone reveals nothing.
 */
const storedKey = (key: string) => createHash('sha256').update(key).digest('hex');
const sealingKey = (principal: string, key: string) =>
  createHash('sha256').update(`berth idempotency\u0000${principal}\u0000${key}`).digest();

/** A streamed body (an archive upload) is not read here: its type and length stand for it. */
const bodyOf = (request: FastifyRequest): string =>
  typeof (request.body as { pipe?: unknown } | null)?.pipe === 'function'
    ? `${request.headers['content-type']} ${request.headers['content-length'] ?? '-'}`
    : JSON.stringify(request.body ?? null);

const fingerprint = (request: FastifyRequest, secret: Buffer): string =>
  createHmac('sha256', secret)
    .update(`${request.method} ${request.url}\n${bodyOf(request)}`)
    .digest('hex');

interface KeyRow {
  fingerprint: string;
  state: 'running' | 'done';
  status_code: number | null;
  headers: Record<string, string> | null;
  body: string | null;
  expires_at: string;
}

/**
 * Idempotency-Key on every POST: the first completed response (< 500) is stored for
 * 24 hours per principal and replayed; a concurrent duplicate is 409, a different request 422.
 */
export function installIdempotency(app: FastifyInstance, db: Db, clock: Clock): void {
  app.decorateRequest('idempotency', null);

  const reserve = async (principal: string, key: string, fp: string): Promise<boolean> => {
    const now = clock.now();
    // An expired key is free again, and so is a claim whose process died before answering:
    // drop either, then claim the key through the primary key.
    await db.query(
      `DELETE FROM idempotency_keys WHERE principal = $1 AND key = $2
         AND (expires_at <= $3 OR (state = 'running' AND created_at <= $4))`,
      [principal, key, now, new Date(now.getTime() - ABANDONED_AFTER_MS)],
    );
    const r = await db.query(
      `INSERT INTO idempotency_keys (principal, key, fingerprint, state, created_at, expires_at) VALUES ($1, $2, $3, 'running', $4, $5)
       ON CONFLICT (principal, key) DO NOTHING`,
      [principal, key, fp, now, new Date(now.getTime() + TTL_MS)],
    );
    return r.rowCount === 1;
  };

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = request.headers['idempotency-key'];
    if (typeof raw !== 'string' || !request.caller) return;
    const rawKey = parseKey(raw);
    const principal = `${request.caller.principal.kind}:${request.caller.principal.id ?? '-'}`;
    const key = storedKey(rawKey);
    const secret = sealingKey(principal, rawKey);
    const fp = fingerprint(request, secret);
    if (await reserve(principal, key, fp)) {
      request.idempotency = { principal, key, secret };
      return;
    }
    const r = await db.query<KeyRow>('SELECT * FROM idempotency_keys WHERE principal = $1 AND key = $2', [principal, key]);
    const row = r.rows[0];
    if (!row) throw idempotencyKeyInUse('The key is being released; retry.');
    if (row.fingerprint !== fp) {
      throw idempotencyKeyReused();
    }
    if (row.state === 'running') {
      throw idempotencyKeyInUse('A request with this Idempotency-Key is still in progress.');
    }
    void reply
      .code(row.status_code ?? 200)
      .headers({ ...(row.headers ?? {}), 'idempotent-replayed': 'true' })
      .serializer((p: unknown) => p as string);
    return reply.send(row.body ? unseal(row.body, secret) : '');
  };

  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = request.idempotency;
    if (!claim) return payload;
    request.idempotency = null;
    if (reply.statusCode >= 500) {
      await db.query('DELETE FROM idempotency_keys WHERE principal = $1 AND key = $2', [claim.principal, claim.key]);
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const h of REPLAYED_HEADERS) {
      const v = reply.getHeader(h);
      if (v !== undefined) headers[h] = String(v);
    }
    await db.query(
      `UPDATE idempotency_keys SET state = 'done', status_code = $3, headers = $4, body = $5 WHERE principal = $1 AND key = $2`,
      [
        claim.principal,
        claim.key,
        reply.statusCode,
        JSON.stringify(headers),
        seal(typeof payload === 'string' ? payload : '', claim.secret),
      ],
    );
    return payload;
  };

  // Hooks of the POST routes only: other requests do not pass through them at all.
  app.addHook('onRoute', (route) => {
    if (![route.method].flat().includes('POST')) return;
    route.preHandler = [...[route.preHandler ?? []].flat(), preHandler];
    route.onSend = [...[route.onSend ?? []].flat(), onSend];
  });
}

export const pruneIdempotencyKeys = (db: Db, now: Date) => db.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now]);
