import { randomBytes } from 'node:crypto';
import { type Caller, requireWritable } from '../../auth/caller.js';
import { displayPrefix, generateTokenSecret, hashSecret } from '../../auth/secret.js';
import type { Queryable } from '../../db/client.js';
import { forbidden, invalidLoginCode } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { type AccountRow, findAccountById, reachableAccount } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { publishEvent } from '../publishing/index.js';
import * as repo from './repo.js';
import type { LoginLink, Session } from './schemas.js';

/** A login link's code is exchanged within 60 s; the session it opens lasts 8 hours at most. */
const CODE_MS = 60_000;
const SESSION_MS = 8 * 3_600_000;

/**
 * Single sign-on, as billing systems expect it: the operator or an account's reseller makes a
 * link (a single-use code), and whoever opens it exchanges the code once for a token of that
 * account alone, narrowed to the scopes of the token that made the link, for 8 hours (no longer
 * than that token lives). Only the code's hash is stored; a used, expired or unknown code is a
 * 401 `invalid_login_code`, and the exchange marks the code used in the statement that checks it.
 */
export function loginLinks(deps: ServiceDeps) {
  const { db, clock } = deps;

  const reachable = (caller: Caller, accountId: string): Promise<AccountRow> => reachableAccount(db, caller, accountId);

  return {
    /** The account, for the route's reach check (404 when out of reach). */
    reachable,

    async create(caller: Caller, accountId: string, base: string): Promise<LoginLink> {
      const account = await reachable(caller, accountId);
      if (caller.principal.kind === 'account') throw forbidden('Login links are made by the operator or the account’s reseller.');
      requireWritable(caller);
      const code = randomBytes(32).toString('base64url');
      const expiresAt = new Date(clock.now().getTime() + CODE_MS);
      await db.query('INSERT INTO login_codes (code_hash, account_id, created_by, expires_at) VALUES ($1, $2, $3, $4)', [
        hashSecret(code),
        account.id,
        caller.tokenId,
        expiresAt.toISOString(),
      ]);
      return {
        url: `${base}/panel/#login_code=${code}`,
        login_code: code,
        account_id: account.id,
        expires_at: expiresAt.toISOString(),
      };
    },

    async exchange(code: string): Promise<Session> {
      const now = clock.now();
      return db.transaction(async (tx) => {
        const spent = (
          await tx.query<{ account_id: string; created_by: string }>(
            `UPDATE login_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2
             RETURNING account_id, created_by`,
            [hashSecret(code), now.toISOString()],
          )
        ).rows[0];
        const maker = spent && (await repo.findTokenById(tx, spent.created_by));
        const account = spent && (await findAccountById(tx, spent.account_id));
        if (!spent || !maker || !account) throw invalidLoginCode();
        const lifetime = now.getTime() + SESSION_MS;
        const expiresAt = new Date(maker.expires_at ? Math.min(lifetime, new Date(maker.expires_at).getTime()) : lifetime);
        const secret = generateTokenSecret();
        const token = await repo.insertToken(tx, {
          id: newId('tok'),
          name: 'login link session',
          principal_kind: 'account',
          reseller_id: null,
          account_id: account.id,
          scopes: maker.scopes,
          account_ids: null,
          expires_at: expiresAt.toISOString(),
          allowed_ips: [],
          prefix: displayPrefix(secret),
          secret_hash: hashSecret(secret),
          created_by: maker.id,
        });
        await usedEvent(tx, account, maker.id, token.id, expiresAt);
        return { token: secret, account_id: account.id, expires_at: expiresAt.toISOString() };
      });
    },
  };
}

/** Codes past their minute, used or not, are of no use to anyone: the hourly housekeeping deletes them. */
export const pruneLoginCodes = (db: Queryable, now: Date) =>
  db.query('DELETE FROM login_codes WHERE expires_at < $1', [now.toISOString()]);

const usedEvent = (tx: Queryable, account: AccountRow, madeBy: string, tokenId: string, expiresAt: Date) =>
  publishEvent(tx, {
    type: 'account.login_link.used',
    accountId: account.id,
    resellerId: account.reseller_id,
    resource: { type: 'account', id: account.id, version: account.version },
    data: { account_id: account.id, made_by_token_id: madeBy, session_token_id: tokenId, expires_at: expiresAt.toISOString() },
  });
