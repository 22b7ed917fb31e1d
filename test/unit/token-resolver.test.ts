import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTokenSecret } from '../../src/auth/secret.js';
import type { Db, Queryable } from '../../src/db/client.js';
import { TokenResolver } from '../../src/modules/tokens/resolver.js';
import { mintOperatorToken } from '../../src/modules/tokens/service.js';
import { freshDb } from '../helpers/db.js';

const TTL = 10_000;
let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => ({ db, drop } = await freshDb()));
afterAll(async () => drop());

/** Waits for a condition, then one more turn of the event loop for what it set off. */
const until = async (check: () => boolean) => {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
  await new Promise((r) => setTimeout(r, 0));
};

/**
 * The real database behind a counter of token lookups; `hold` keeps a lookup's answer back
 * (the row already read) until it is released.
 */
function lookups() {
  let sent = 0;
  let answered = 0;
  let hold: Promise<void> | null = null;
  const queryable: Queryable = {
    async query<T>(text: string, params?: unknown[]) {
      const lookup = text.includes('secret_hash');
      if (lookup) sent++;
      const r = await db.query<T>(text, params);
      if (lookup && hold) await hold;
      if (lookup) answered++;
      return r;
    },
  };
  return {
    queryable,
    sent: () => sent,
    /** Resolves once `n` lookups have been answered and what they started has run. */
    answered: (n: number) => until(() => answered >= n),
    hold: () => {
      let release = () => {};
      hold = new Promise<void>((r) => (release = r));
      return () => {
        hold = null;
        release();
      };
    },
  };
}

async function setup() {
  const secret = generateTokenSecret();
  await db.transaction((tx) => mintOperatorToken(tx, secret, 'resolver test'));
  const counted = lookups();
  let now = Date.parse('2026-11-25T10:00:00Z');
  const resolver = new TokenResolver({
    db: counted.queryable,
    clock: { now: () => new Date(now) },
    ttlMs: TTL,
    bootstrapToken: null,
    onBackgroundError: (err) => {
      throw err;
    },
  });
  return { secret, resolver, counted, at: (ms: number) => (now = Date.parse('2026-11-25T10:00:00Z') + ms) };
}

describe('token resolver', () => {
  it('looks a token up once for a burst of requests that all miss the cache', async () => {
    const { secret, resolver, counted } = await setup();
    const callers = await Promise.all(Array.from({ length: 32 }, async () => resolver.resolve(secret, '127.0.0.1')));
    expect(callers.every((c) => c?.principal.kind === 'operator')).toBe(true);
    expect(counted.sent()).toBe(1);
  });

  it('refreshes a token in use in the background, so no request waits once it is cached', async () => {
    const { secret, resolver, counted, at } = await setup();
    await resolver.resolve(secret, '127.0.0.1');
    at(0.4 * TTL);
    expect(resolver.resolve(secret, '127.0.0.1')).not.toBeInstanceOf(Promise);
    expect(counted.sent()).toBe(1);
    // Past half the TTL: answered from the cache, one lookup sent however many requests come.
    at(0.6 * TTL);
    for (let i = 0; i < 5; i++) expect(resolver.resolve(secret, '127.0.0.1')).not.toBeInstanceOf(Promise);
    expect(counted.sent()).toBe(2);
    // The refreshed entry counts from its own lookup: still cached past the first one's TTL.
    await counted.answered(2);
    at(1.5 * TTL);
    expect(resolver.resolve(secret, '127.0.0.1')).not.toBeInstanceOf(Promise);
    // Unused for longer than the TTL: the next request waits for a lookup.
    at(3 * TTL);
    expect(resolver.resolve(secret, '127.0.0.1')).toBeInstanceOf(Promise);
  });

  it('does not cache what a lookup read before a revocation it overlapped', async () => {
    const { secret, resolver, counted } = await setup();
    const release = counted.hold();
    const caller = resolver.resolve(secret, '127.0.0.1');
    await until(() => counted.sent() === 1);
    // The row has been read (valid); now it is revoked, as the tokens service does it.
    const { rows } = await db.query<{ id: string }>(`DELETE FROM tokens WHERE name = 'resolver test' RETURNING id`);
    for (const r of rows) resolver.invalidate(r.id);
    release();
    expect(await caller).toBeNull();
    expect(counted.sent()).toBe(2);
    expect(await resolver.resolve(secret, '127.0.0.1')).toBeNull();
  });
});
