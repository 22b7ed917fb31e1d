import type { Db } from '../db/client.js';

export interface Policy {
  name: string;
  /** Quota: requests a window (the bucket's capacity). */
  quota: number;
  windowSeconds: number;
}

export interface Charge {
  allowed: boolean;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one request is allowed again (when refused). */
  retryAfterSeconds: number;
}

/**
 * Token buckets: capacity `quota`, refilled continuously at quota/window per second. A store in
 * memory answers at once (no promise on the request's path), one in the database asynchronously.
 */
export interface BucketStore {
  charge(key: string, policy: Policy): Charge | Promise<Charge>;
}

function describe(tokens: number, allowed: boolean, policy: Policy): Charge {
  const rate = policy.quota / policy.windowSeconds;
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.ceil((policy.quota - tokens) / rate),
    retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / rate)),
  };
}

/** Fast, per process. Buckets idle long enough to be full are dropped to bound memory. */
export class MemoryBucketStore implements BucketStore {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly now: () => number = Date.now) {}

  private refill(key: string, policy: Policy): { tokens: number; at: number } {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: policy.quota, at: t };
    // A clock stepped back (NTP) refills nothing, rather than draining every bucket.
    const elapsed = Math.max(0, t - b.at);
    b.tokens = Math.min(policy.quota, b.tokens + (elapsed / 1000) * (policy.quota / policy.windowSeconds));
    b.at = t;
    return b;
  }

  charge(key: string, policy: Policy): Charge {
    const b = this.refill(key, policy);
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (this.buckets.size > 100_000) this.sweep(policy);
    return describe(b.tokens, allowed, policy);
  }

  private sweep(policy: Policy): void {
    const fullAfterMs = policy.windowSeconds * 1000;
    const t = this.now();
    for (const [k, b] of this.buckets) {
      if (t - b.at < fullAfterMs) break; // insertion order: the rest are newer
      this.buckets.delete(k);
    }
  }
}

const REFILLED = `least($2::float8, b.tokens + greatest(0, extract(epoch from clock_timestamp() - b.updated_at))::float8 * $3::float8)`;

/** Shared by every process on one database: one atomic upsert a request. */
export class DatabaseBucketStore implements BucketStore {
  constructor(private readonly db: Db) {}

  async charge(key: string, policy: Policy): Promise<Charge> {
    const r = await this.db.query<{ tokens: number; allowed: boolean }>(
      `INSERT INTO rate_buckets AS b (key, tokens, allowed, updated_at) VALUES ($1, $2::float8 - 1, true, clock_timestamp())
       ON CONFLICT (key) DO UPDATE SET
         tokens = CASE WHEN ${REFILLED} >= 1 THEN ${REFILLED} - 1 ELSE ${REFILLED} END,
         allowed = ${REFILLED} >= 1,
         updated_at = clock_timestamp()
       RETURNING tokens, allowed`,
      [key, policy.quota, policy.quota / policy.windowSeconds],
    );
    const row = r.rows[0] ?? { tokens: 0, allowed: false };
    return describe(Number(row.tokens), row.allowed, policy);
  }
}

/** IETF draft-ietf-httpapi-ratelimit-headers, structured-field syntax. */
export function rateLimitHeaders(policy: Policy, c: Charge): Record<string, string> {
  return {
    'ratelimit-policy': `"${policy.name}";q=${policy.quota};w=${policy.windowSeconds}`,
    ratelimit: `"${policy.name}";r=${c.remaining};t=${c.resetSeconds}`,
  };
}

/** Buckets idle for an hour are full again: dropping them changes no answer. */
export const pruneRateBuckets = (db: Db) => db.query(`DELETE FROM rate_buckets WHERE updated_at < now() - interval '1 hour'`);
