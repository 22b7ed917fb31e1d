import type { Caller, CallerResolver } from '../../auth/caller.js';
import { hashSecret, hasValidFormat } from '../../auth/secret.js';
import type { Queryable } from '../../db/client.js';
import { cidrMatcher } from '../../lib/cidr.js';
import { epochMs, type Clock } from '../../lib/time.js';
import { findBySecretHash, touchLastUsed, type ResolvedTokenRow } from './repo.js';

interface Entry {
  row: ResolvedTokenRow;
  ipAllowed: (ip: string) => boolean;
  cachedAt: number;
  /** expires_at and last_used_at in epoch ms, parsed once rather than on every request. */
  expiresMs: number | null;
  lastUsedMs: number;
}

const MAX_ENTRIES = 10_000;
const LAST_USED_RESOLUTION_MS = 60_000;

export interface TokenResolverOptions {
  db: Queryable;
  clock: Clock;
  ttlMs: number;
  /** The bootstrap token is exempt from the format rule. */
  bootstrapToken: string | null;
  /** A background refresh or last_used_at write that failed (the request it served went on). */
  onBackgroundError: (err: unknown) => void;
}

/**
 * Turns a bearer secret into a Caller. Lookups are cached for a short TTL so authentication
 * does not cost a database round trip per request; revoking in this process evicts at once,
 * other processes see it within the TTL (counted from when the lookup was sent).
 *
 * A token in use is looked up again in the background once its entry is past half the TTL, so
 * under steady use no request waits for the lookup; and a token is looked up by one query at a
 * time, however many requests wait for it. Before both, every TTL the 32 requests in flight in
 * the list benchmark each missed the cache at once, each sent the lookup and each wrote
 * last_used_at: on PGlite, whose queries take turns on the event loop, that held every request
 * for up to a quarter of a second, the p99 of a whole run.
 */
export class TokenResolver implements CallerResolver {
  private readonly byHash = new Map<string, Entry>();
  private readonly hashById = new Map<string, string>();
  private readonly lookups = new Map<string, Promise<Entry | null>>();
  /** Bumped by every eviction: a lookup sent before it may have read the row as it was before. */
  private generation = 0;

  constructor(private readonly opts: TokenResolverOptions) {}

  /**
   * The caller for a bearer secret: answered at once from the cache (nearly every request, so
   * authentication takes no promise), from the database when the cache does not know the token.
   */
  resolve(secret: string, ip: string): Caller | null | Promise<Caller | null> {
    const hash = hashSecret(secret);
    const now = this.opts.clock.now();
    const entry = this.byHash.get(hash);
    const age = entry ? now.getTime() - entry.cachedAt : Infinity;
    if (entry && age <= this.opts.ttlMs) {
      if (age > this.opts.ttlMs / 2) this.lookup(hash).catch(this.opts.onBackgroundError);
      return this.callerOf(entry, ip, now);
    }
    // Checked only here: a cached entry's hash is a well-formed secret's (its checksum and pattern
    // cost 2 µs a request).
    if (!this.wellFormed(secret)) return null;
    return this.lookup(hash).then((e) => (e ? this.callerOf(e, ip, this.opts.clock.now()) : null));
  }

  /** The token's row, cached; one query per token at a time, shared by every request that waits. */
  private lookup(hash: string): Promise<Entry | null> {
    const running = this.lookups.get(hash);
    if (running) return running;
    const generation = this.generation;
    const sentAt = this.opts.clock.now().getTime();
    const lookup = findBySecretHash(this.opts.db, hash)
      .then((row): Entry | null | Promise<Entry | null> => {
        // Evicted meanwhile (revoked, suspended): this row may predate it, so ask again.
        if (generation !== this.generation) return this.lookup(hash);
        if (!row) {
          this.evictHash(hash);
          return null;
        }
        const known = this.byHash.get(hash);
        const entry = {
          row,
          ipAllowed: cidrMatcher(row.allowed_ips),
          cachedAt: sentAt,
          expiresMs: row.expires_at ? epochMs(row.expires_at) : null,
          // The row may not show this process's own last write of it yet.
          lastUsedMs: Math.max(row.last_used_at ? epochMs(row.last_used_at) : 0, known?.lastUsedMs ?? 0),
        };
        this.remember(hash, entry);
        return entry;
      })
      .finally(() => {
        if (this.lookups.get(hash) === lookup) this.lookups.delete(hash);
      });
    this.lookups.set(hash, lookup);
    return lookup;
  }

  private wellFormed(secret: string): boolean {
    return hasValidFormat(secret) || secret === this.opts.bootstrapToken;
  }

  private callerOf(entry: Entry, ip: string, now: Date): Caller | null {
    const { row } = entry;
    if (entry.expiresMs !== null && entry.expiresMs <= now.getTime()) return null;
    if (row.allowed_ips.length > 0 && !entry.ipAllowed(ip)) return null;
    this.touch(entry, now);
    return {
      tokenId: row.id,
      principal: { kind: row.principal_kind, id: row.account_id ?? row.reseller_id },
      resellerId: row.effective_reseller_id,
      resellerSuspended: row.reseller_status === 'suspended',
      scopes: row.scopes,
      accountIds: row.account_ids,
      expiresAt: entry.expiresMs === null ? null : new Date(entry.expiresMs),
      allowedIps: row.allowed_ips,
    };
  }

  /** Forget a token now (revocation, or a change to its principal). */
  invalidate(tokenId: string): void {
    const hash = this.hashById.get(tokenId);
    if (hash) this.evictHash(hash);
    this.generation++;
    this.lookups.clear();
  }

  /** Forget every cached token (a principal's status changed: suspension). */
  clear(): void {
    this.byHash.clear();
    this.hashById.clear();
    this.generation++;
    this.lookups.clear();
  }

  private remember(hash: string, entry: Entry): void {
    if (this.byHash.size >= MAX_ENTRIES) {
      const oldest = this.byHash.keys().next().value;
      if (oldest !== undefined) this.evictHash(oldest);
    }
    this.byHash.set(hash, entry);
    this.hashById.set(entry.row.id, hash);
  }

  private evictHash(hash: string): void {
    const entry = this.byHash.get(hash);
    if (entry) this.hashById.delete(entry.row.id);
    this.byHash.delete(hash);
  }

  // last_used_at is kept to the minute: one write a minute per token, off the request path.
  private touch(entry: Entry, now: Date): void {
    if (now.getTime() - entry.lastUsedMs < LAST_USED_RESOLUTION_MS) return;
    entry.lastUsedMs = now.getTime();
    touchLastUsed(this.opts.db, entry.row.id, now.toISOString()).catch(this.opts.onBackgroundError);
  }
}
