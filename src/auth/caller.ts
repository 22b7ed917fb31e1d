import { accountSuspended, forbidden, insufficientScope } from '../lib/errors.js';
import { type Scope, grants } from './scopes.js';

export type PrincipalKind = 'operator' | 'reseller' | 'account';

export interface Principal {
  kind: PrincipalKind;
  /** null for the operator (there is one). */
  id: string | null;
}

/** Who is calling: the authenticated token and what it may reach. */
export interface Caller {
  tokenId: string;
  principal: Principal;
  /** The reseller the caller acts for or belongs to (an account's reseller), if any. */
  resellerId: string | null;
  resellerSuspended: boolean;
  scopes: string[];
  /** Narrowed reach: only these accounts (null: the principal's whole reach). */
  accountIds: string[] | null;
  expiresAt: Date | null;
  /** The CIDRs the token may be used from (empty: anywhere). */
  allowedIps: string[];
}

export function requireScope(caller: Caller, scope: Scope): void {
  if (!grants(caller.scopes, scope)) {
    throw insufficientScope(scope);
  }
}

/**
 * SQL that keeps only rows in the caller's reach. `accountCol`/`resellerCol` name the row's
 * account and reseller columns; parameters are appended to `params`.
 */
export function reachSql(caller: Caller, cols: { account: string; reseller: string }, params: unknown[]): string {
  // No helper closure for the placeholders: every list runs this, and under tsx (esbuild's
  // keepNames) each closure made is also named through Object.defineProperty, 3 µs a request.
  const parts: string[] = [];
  const { kind, id } = caller.principal;
  if (kind === 'reseller') parts.push(`${cols.reseller} = $${params.push(id)}`);
  if (kind === 'account') parts.push(`${cols.account} = $${params.push(id)}`);
  if (caller.accountIds) parts.push(`${cols.account} = ANY($${params.push(caller.accountIds)}::text[])`);
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

/** Whether one account (with its reseller) lies in the caller's reach. */
export function reachesAccount(caller: Caller, accountId: string, resellerId: string | null): boolean {
  if (caller.accountIds && !caller.accountIds.includes(accountId)) return false;
  switch (caller.principal.kind) {
    case 'operator':
      return true;
    case 'reseller':
      return resellerId === caller.principal.id;
    case 'account':
      return accountId === caller.principal.id;
  }
}

/** Operator-only actions: others get 403 (or 404 earlier, where the resource is out of reach). */
export function requireKind(caller: Caller, kinds: PrincipalKind[], action: string): void {
  if (!kinds.includes(caller.principal.kind)) {
    throw forbidden(`A ${caller.principal.kind} token may not ${action}.`);
  }
}

/** Writes by a principal of a suspended reseller (or suspended account) are refused. */
export function requireWritable(caller: Caller, account?: { status: string }): void {
  if (caller.principal.kind === 'operator') return;
  if (caller.resellerSuspended) throw accountSuspended('The reseller is suspended; its accounts are read-only.');
  if (caller.principal.kind === 'account' && account?.status === 'suspended') {
    throw accountSuspended('The account is suspended; its resources are read-only.');
  }
}

/**
 * Turns bearer secrets into callers, with a cache that writes must be able to empty: the tokens
 * module implements it, the HTTP layer and the services use only this.
 */
export interface CallerResolver {
  /** The caller, or null; a promise only when the database must be asked (a token not in memory). */
  resolve(secret: string, ip: string): Caller | null | Promise<Caller | null>;
  /** Forget one token now (revocation). */
  invalidate(tokenId: string): void;
  /** Forget every cached token (a principal's status changed). */
  clear(): void;
}

// The callers Berth's own work acts as (a restore, a move): none can be made from a request.
const systemCallers = new WeakSet<Caller>();

/** The caller of work no token asked for (the scheduler, benchmarks): the operator's full reach. */
export const systemCaller = (name: string): Caller => {
  const caller: Caller = {
    tokenId: name,
    principal: { kind: 'operator', id: null },
    resellerId: null,
    resellerSuspended: false,
    scopes: ['*'],
    accountIds: null,
    expiresAt: null,
    allowedIps: [],
  };
  systemCallers.add(caller);
  return caller;
};

/** Whether Berth's own work makes the call (a move's restore of a site is not a customer's deployment). */
export const isSystemCaller = (caller: Caller): boolean => systemCallers.has(caller);
