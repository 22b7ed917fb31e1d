import type { Queryable } from '../../db/client.js';
import { conflict } from '../../lib/errors.js';
import type { AccountRow } from './repo.js';
import type { Placement } from './schemas.js';

/** 409 `account_moving` while a move holds the account (a deployment, backup, restore, termination or second move). */
export function notMoving(account: Pick<AccountRow, 'move_id'>): void {
  if (account.move_id)
    throw conflict('account_moving', 'The account is being moved to another server; try again once the move has ended.', {
      move_id: account.move_id,
    });
}

/** The same, read inside the caller's transaction (FOR SHARE: a move that starts waits for it to commit). */
export async function notMovingNow(tx: Queryable, accountId: string): Promise<void> {
  const r = await tx.query<{ move_id: string | null }>('SELECT move_id FROM accounts WHERE id = $1 FOR SHARE', [accountId]);
  notMoving({ move_id: r.rows[0]?.move_id ?? null });
}

/**
 * What a move does to the account row, each in the move's transaction: hold it (the lock itself,
 * taken by a conditional UPDATE, never read first), freeze or thaw how its servers serve it,
 * place it on the target, let it go. Each change that the servers render differently runs the
 * modules' `statusChanged` hooks, which render its units again where it is placed.
 */
export function accountMoves(rendered: ((tx: Queryable, accountId: string) => Promise<void>)[]) {
  const renderAgain = async (tx: Queryable, accountId: string) => {
    for (const hook of rendered) await hook(tx, accountId);
  };
  return {
    /** Whether the move now holds the account (it held it already, or nothing did and it is not being terminated). */
    async hold(tx: Queryable, accountId: string, moveId: string): Promise<boolean> {
      const r = await tx.query(
        `UPDATE accounts SET move_id = $2 WHERE id = $1 AND (move_id = $2 OR (move_id IS NULL AND status <> 'terminating'))`,
        [accountId, moveId],
      );
      return r.rowCount === 1;
    },

    /** Frozen (`at`) or served again (null); rendered again only when that changed. */
    async freeze(tx: Queryable, accountId: string, moveId: string, at: Date | null): Promise<void> {
      const r = await tx.query(
        `UPDATE accounts SET frozen_at = $3 WHERE id = $1 AND move_id = $2 AND (frozen_at IS NULL) <> ($3::timestamptz IS NULL)`,
        [accountId, moveId, at],
      );
      if (r.rowCount === 1) await renderAgain(tx, accountId);
    },

    /** The moved roles placed on their target; its units render again there. */
    async place(tx: Queryable, accountId: string, moveId: string, to: Partial<Placement>): Promise<void> {
      await tx.query(
        `UPDATE accounts SET web_server_id = COALESCE($3, web_server_id), mail_server_id = COALESCE($4, mail_server_id),
           database_server_id = COALESCE($5, database_server_id), updated_at = now(), version = version + 1
         WHERE id = $1 AND move_id = $2`,
        [accountId, moveId, to.web ?? null, to.mail ?? null, to.database ?? null],
      );
      await renderAgain(tx, accountId);
    },

    /** The move lets the account go, thawed. */
    async release(tx: Queryable, accountId: string, moveId: string): Promise<void> {
      const r = await tx.query<{ was_frozen: boolean }>(
        `UPDATE accounts a SET move_id = NULL, frozen_at = NULL FROM (SELECT frozen_at IS NOT NULL AS was_frozen FROM accounts WHERE id = $1) b
         WHERE a.id = $1 AND a.move_id = $2 RETURNING b.was_frozen`,
        [accountId, moveId],
      );
      if (r.rows[0]?.was_frozen) await renderAgain(tx, accountId);
    },
  };
}
export type AccountMoves = ReturnType<typeof accountMoves>;
