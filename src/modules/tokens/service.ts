import { type Caller, type Principal, reachesAccount, requireWritable } from '../../auth/caller.js';
import { coversAll } from '../../auth/scopes.js';
import { displayPrefix, generateTokenSecret, hashSecret } from '../../auth/secret.js';
import type { Db, Queryable } from '../../db/client.js';
import type { PageParams } from '../../db/paging.js';
import { cidrWithin, parseCidr } from '../../lib/cidr.js';
import { type FieldError, forbidden, insufficientScope, invalid, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion } from '../../lib/if-match.js';
import { findAccountById } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { publishEvent } from '../publishing/index.js';
import { findReseller } from '../resellers/index.js';
import * as repo from './repo.js';
import type { CreateToken, Token } from './schemas.js';

const toToken = (r: repo.TokenRow): Token => ({
  id: r.id,
  name: r.name,
  principal: { kind: r.principal_kind, id: r.account_id ?? r.reseller_id },
  scopes: r.scopes,
  account_ids: r.account_ids,
  expires_at: r.expires_at,
  allowed_ips: r.allowed_ips,
  last_used_at: r.last_used_at,
  prefix: r.prefix,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

interface Target {
  kind: Principal['kind'];
  resellerId: string | null;
  accountId: string | null;
  /** For events: the reseller the new token's principal belongs to. */
  eventReseller: string | null;
}

const tokenEvent = (tx: Queryable, type: string, row: repo.TokenRow, resellerId: string | null) =>
  publishEvent(tx, {
    type,
    accountId: row.account_id,
    resellerId,
    resource: { type: 'token', id: row.id, version: row.version },
    data: toToken(row),
  });

export function tokensService(deps: ServiceDeps) {
  const { db, clock } = deps;

  async function load(caller: Caller, id: string): Promise<repo.TokenRow> {
    const row = await repo.findToken(db, caller, id);
    if (!row) throw notFound('token');
    return row;
  }

  /** Tokens are minted only downwards: for the caller itself or a principal below it. */
  async function resolveTarget(caller: Caller, principal: Principal | undefined): Promise<Target> {
    const p = principal ?? caller.principal;
    const self = p.kind === caller.principal.kind && (p.id ?? null) === caller.principal.id;
    if (p.kind === 'operator') {
      if (caller.principal.kind !== 'operator') throw forbidden('Only the operator can mint operator tokens.');
      return { kind: 'operator', resellerId: null, accountId: null, eventReseller: null };
    }
    if (p.kind === 'reseller') {
      if (!self && caller.principal.kind !== 'operator')
        throw forbidden('Tokens can be minted only for the caller or principals below it.');
      if (!p.id || !(await findReseller(db, caller, p.id))) throw notFound('reseller');
      return { kind: 'reseller', resellerId: p.id, accountId: null, eventReseller: p.id };
    }
    const account = p.id ? await findAccountById(db, p.id) : undefined;
    if (!account || !reachesAccount(caller, account.id, account.reseller_id)) throw notFound('account');
    return { kind: 'account', resellerId: null, accountId: account.id, eventReseller: account.reseller_id };
  }

  /**
   * A child token lies inside the minting token: its scopes, its accounts (reached by the
   * minting token and by the new principal), its lifetime and its addresses. Omitted fields
   * inherit the minting token's; anything broader is a 422 naming the field.
   */
  async function narrowedFields(caller: Caller, target: Target, input: CreateToken) {
    if (!coversAll(caller.scopes, input.scopes)) {
      const missing = input.scopes.find((s) => !coversAll(caller.scopes, [s]));
      throw insufficientScope(missing as string, `The new token cannot have ${missing}: the minting token lacks it.`);
    }
    const errors: FieldError[] = [];
    const accountIds = target.kind === 'account' ? null : (input.account_ids ?? caller.accountIds);
    for (const [i, id] of (input.account_ids && target.kind !== 'account' ? input.account_ids : []).entries()) {
      const account = await findAccountById(db, id);
      const reached =
        account &&
        reachesAccount(caller, account.id, account.reseller_id) &&
        (target.kind === 'operator' || account.reseller_id === target.resellerId);
      if (!reached)
        errors.push({ pointer: `/account_ids/${i}`, code: 'out_of_reach', detail: "is not in the minting token's reach" });
    }

    const expiresAt = input.expires_at ? new Date(input.expires_at) : caller.expiresAt;
    if (expiresAt && expiresAt.getTime() <= clock.now().getTime()) {
      errors.push({ pointer: '/expires_at', code: 'in_the_past', detail: 'must be in the future' });
    } else if (expiresAt && caller.expiresAt && expiresAt > caller.expiresAt) {
      errors.push({
        pointer: '/expires_at',
        code: 'after_parent',
        detail: `must not be later than the minting token's expiry, ${caller.expiresAt.toISOString()}`,
      });
    }

    const allowedIps = input.allowed_ips ?? caller.allowedIps;
    allowedIps.forEach((c, i) => {
      if (!parseCidr(c))
        errors.push({ pointer: `/allowed_ips/${i}`, code: 'invalid_format', detail: 'must be an IP address or CIDR block' });
      else if (caller.allowedIps.length && !cidrWithin(c, caller.allowedIps))
        errors.push({
          pointer: `/allowed_ips/${i}`,
          code: 'out_of_reach',
          detail: "must lie within the minting token's allowed_ips",
        });
    });
    if (caller.allowedIps.length && allowedIps.length === 0) {
      errors.push({
        pointer: '/allowed_ips',
        code: 'out_of_reach',
        detail: `must not be empty: the minting token is limited to ${caller.allowedIps.join(', ')}`,
      });
    }
    if (errors.length) throw invalid(errors);
    return { accountIds, expiresAt, allowedIps };
  }

  return {
    load,
    async get(caller: Caller, id: string): Promise<Token> {
      return toToken(await load(caller, id));
    },

    /** The calling token itself (GET /v1/me); it is always within its own reach. */
    async current(caller: Caller): Promise<Token> {
      const row = await repo.findTokenById(db, caller.tokenId);
      if (!row) throw notFound('token');
      return toToken(row);
    },

    async list(caller: Caller, page: PageParams): Promise<Token[]> {
      return (await repo.listTokens(db, caller, page)).map(toToken);
    },

    async create(caller: Caller, input: CreateToken): Promise<Token & { secret: string }> {
      requireWritable(caller);
      const target = await resolveTarget(caller, input.principal);
      const { accountIds, expiresAt, allowedIps } = await narrowedFields(caller, target, input);
      const secret = generateTokenSecret();
      const row = await db.transaction(async (tx) => {
        const created = await repo.insertToken(tx, {
          id: newId('tok'),
          name: input.name,
          principal_kind: target.kind,
          reseller_id: target.resellerId,
          account_id: target.accountId,
          scopes: [...new Set(input.scopes)],
          account_ids: accountIds,
          expires_at: expiresAt?.toISOString() ?? null,
          allowed_ips: allowedIps,
          prefix: displayPrefix(secret),
          secret_hash: hashSecret(secret),
          created_by: caller.tokenId,
        });
        await tokenEvent(tx, 'token.created', created, target.eventReseller);
        return created;
      });
      return { ...toToken(row), secret };
    },

    async revoke(caller: Caller, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, id);
      requireWritable(caller);
      checkVersion(expectedVersion, current.version);
      const reseller =
        current.reseller_id ??
        (current.account_id ? ((await findAccountById(db, current.account_id))?.reseller_id ?? null) : null);
      await db.transaction(async (tx) => {
        await tokenEvent(tx, 'token.revoked', current, reseller);
        await repo.deleteToken(tx, id);
      });
      deps.resolver.invalidate(id);
    },
  };
}
export type TokensService = ReturnType<typeof tokensService>;

/**
 * First start: creates the operator's token. BERTH_BOOTSTRAP_TOKEN is taken as-is (and kept
 * present on later starts); without it a token is generated and returned to be printed once.
 */
export async function bootstrapOperator(db: Db, bootstrapToken: string | null): Promise<string | null> {
  return db.transaction(async (tx) => {
    await repo.lockBootstrap(tx);
    const secret = bootstrapToken ?? ((await repo.hasOperatorToken(tx)) ? null : generateTokenSecret());
    if (!secret) return null;
    const created = await mintOperatorToken(tx, secret, bootstrapToken ? 'bootstrap' : 'operator (generated at first start)');
    return bootstrapToken || !created ? null : secret;
  });
}

/** Inserts an operator token with every scope; false when that secret already exists. */
export async function mintOperatorToken(tx: Queryable, secret: string, name: string): Promise<boolean> {
  const row = await repo.insertToken(tx, {
    id: newId('tok'),
    name,
    principal_kind: 'operator',
    reseller_id: null,
    account_id: null,
    scopes: ['*'],
    account_ids: null,
    expires_at: null,
    allowed_ips: [],
    prefix: displayPrefix(secret),
    secret_hash: hashSecret(secret),
    created_by: null,
  });
  return row !== undefined;
}
