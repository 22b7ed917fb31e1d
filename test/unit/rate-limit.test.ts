import { describe, expect, it } from 'vitest';
import { MemoryBucketStore } from '../../src/http/rate-limit.js';

describe('MemoryBucketStore', () => {
  const policy = { name: 'read', quota: 2, windowSeconds: 60 };

  it('refuses past the quota and refills at quota per window', () => {
    let now = 0;
    const store = new MemoryBucketStore(() => now);
    expect(store.charge('k', policy).allowed).toBe(true);
    expect(store.charge('k', policy).allowed).toBe(true);
    expect(store.charge('k', policy)).toMatchObject({ allowed: false, retryAfterSeconds: 30 });
    now += 30_000;
    expect(store.charge('k', policy).allowed).toBe(true);
  });

  it('a clock stepped back refills nothing and drains nothing', () => {
    let now = 10 * 86_400_000;
    const store = new MemoryBucketStore(() => now);
    expect(store.charge('k', policy).allowed).toBe(true);
    now -= 5 * 86_400_000;
    expect(store.charge('k', policy)).toMatchObject({ allowed: true, remaining: 0 });
    expect(store.charge('k', policy).allowed).toBe(false);
  });
});
