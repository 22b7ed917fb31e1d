import type { Db } from '../../db/client.js';
import type { Caller, CallerResolver } from '../../auth/caller.js';
import { hashSecret, hasValidFormat } from '../../auth/secret.js';
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
  db: Db;
  clock: Clock;
  ttlMs: number;
  /** The bootstrap token is exempt from the format rule (SPEC §2). */
  bootstrapToken: string | null;
  onBackgroundError: (err: unknown) => void;
}

/**
 * Turns a bearer secret into a Caller. Lookups are cached for a short TTL so authentication
 * does not cost a database round trip per request; revoking in this process evicts at once,
 * other processes see it within the TTL.
 */
export class TokenResolver implements CallerResolver {
  private readonly byHash = new Map<string, Entry>();
  private readonly hashById = new Map<string, string>();

  constructor(private readonly opts: TokenResolverOptions) {}

  /**
   * The caller for a bearer secret: answered at once from the cache (nearly every request, so
   * authentication takes no promise), from the database when the cache does not know the token.
   */
  resolve(secret: string, ip: string): Caller | null | Promise<Caller | null> {
    if (!this.wellFormed(secret)) return null;
    const hash = hashSecret(secret);
    const known = this.fromCache(hash, ip);
    return known !== undefined ? known : this.load(hash, ip);
  }

  private async load(hash: string, ip: string): Promise<Caller | null> {
    const row = await findBySecretHash(this.opts.db, hash);
    if (!row) {
      this.evictHash(hash);
      return null;
    }
    const now = this.opts.clock.now();
    const entry = {
      row,
      ipAllowed: cidrMatcher(row.allowed_ips),
      cachedAt: now.getTime(),
      expiresMs: row.expires_at ? epochMs(row.expires_at) : null,
      lastUsedMs: row.last_used_at ? epochMs(row.last_used_at) : 0,
    };
    this.remember(hash, entry);
    return this.callerOf(entry, ip, now);
  }

  private wellFormed(secret: string): boolean {
    return hasValidFormat(secret) || secret === this.opts.bootstrapToken;
  }

  /** undefined: not cached, or cached too long ago. */
  private fromCache(hash: string, ip: string): Caller | null | undefined {
    const entry = this.byHash.get(hash);
    const now = this.opts.clock.now();
    if (!entry || now.getTime() - entry.cachedAt > this.opts.ttlMs) return undefined;
    return this.callerOf(entry, ip, now);
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
  }

  /** Forget every cached token (a principal's status changed: suspension). */
  clear(): void {
    this.byHash.clear();
    this.hashById.clear();
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
