import type { Queryable } from './client.js';

/** A figure of each of many accounts, by account id; an account left out has 0. */
export type PerAccount = (db: Queryable, accountIds: readonly string[]) => Promise<Map<string, number>>;

/**
 * A figure from one statement over `account_id = ANY($1::text[])`, returning `account_id` and
 * `n` per account: the usage meter asks it for a few hundred accounts at once rather than one
 * statement per account and figure (13,000 statements for 1,000 accounts, seconds of PGlite's
 * main thread), a limit check or a quota for one account.
 */
export const perAccount =
  (sql: string): PerAccount =>
  async (db, accountIds) =>
    new Map((await db.query<{ account_id: string; n: number }>(sql, [accountIds])).rows.map((r) => [r.account_id, r.n]));

/** The figure of one account. */
export const ofOneAccount =
  (figure: PerAccount) =>
  async (db: Queryable, accountId: string): Promise<number> =>
    (await figure(db, [accountId])).get(accountId) ?? 0;
