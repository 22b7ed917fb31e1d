import { requireKind, requireWritable, type Caller } from '../../auth/caller.js';
import type { PartServers } from '../../contribution.js';
import { conflict, invalid } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { type AccountMoves, countAccountsOn, findAccountById, notMoving, writableAccount } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import { toOperation } from '../operations/index.js';
import { resourceReads } from '../reads.js';
import { findServerById, noRoomOn, type Role, ROLES, serverStatus } from '../servers/index.js';
import { sendMoveJob } from './job.js';
import * as repo from './repo.js';
import { moveEvent, toMove } from './representation.js';
import type { CreateMove } from './schemas.js';

/** What a move from a backup needs of the backups module. */
export interface BackupCopies {
  completed(accountId: string, backupId: string): Promise<boolean>;
  unpack(backupId: string, staging: string): Promise<void>;
}

export function movesService(deps: ServiceDeps, accountMoves: AccountMoves, backups: BackupCopies) {
  const { db, jobs, clock } = deps;
  const reads = resourceReads(db, { noun: 'move', find: repo.findMove, list: repo.listMoves, show: toMove });
  const { load } = reads;

  /** Each named target: a server with the role, online, with room, not the role's server now (422 on `/to/<role>` otherwise). */
  async function checkTargets(to: PartServers, from: PartServers): Promise<void> {
    const errors = [];
    for (const role of ROLES) {
      const id = to[role];
      if (!id) continue;
      const pointer = `/to/${role}`;
      const server = await findServerById(db, id);
      if (!server?.roles.includes(role))
        errors.push({ pointer, code: 'unknown_server', detail: `is not a server with the role ${role}` });
      else if (id === from[role]) errors.push({ pointer, code: 'same_server', detail: `the account's ${role} is there already` });
      else if (serverStatus(server, clock.now()) !== 'online')
        errors.push({ pointer, code: 'server_not_online', detail: `is ${serverStatus(server, clock.now())}` });
      else {
        const full = await noRoomOn(server, (await countAccountsOn(db, [id])).get(id) ?? 0, deps.config.dataDir);
        if (full) errors.push({ pointer, code: 'server_full', detail: full });
      }
    }
    if (errors.length) throw invalid(errors);
  }

  return {
    ...reads,

    /** 202 `queued` with an `account.move` operation; the move holds the account from now on (`drainOf`: the drain that asks). */
    async create(caller: Caller, accountId: string, input: CreateMove, drainOf: string | null = null) {
      const account = await writableAccount(db, caller, accountId);
      requireKind(caller, ['operator'], 'move accounts');
      notMoving(account);
      const to = Object.fromEntries(ROLES.filter((r) => input.to[r]).map((r) => [r, input.to[r]])) as PartServers;
      const from = Object.fromEntries(ROLES.filter((r) => to[r]).map((r: Role) => [r, account[`${r}_server_id`]])) as PartServers;
      await checkTargets(to, { web: account.web_server_id, mail: account.mail_server_id, database: account.database_server_id });
      if (input.from_backup && !(await backups.completed(account.id, input.from_backup)))
        throw invalid([{ pointer: '/from_backup', code: 'unknown_backup', detail: 'is not a completed backup of the account' }]);
      const id = newId('mov');
      return db.transaction(async (tx) => {
        if (!(await accountMoves.hold(tx, account.id, id))) {
          // Taken meanwhile: by another move, or by its termination.
          notMoving((await findAccountById(tx, account.id)) ?? { move_id: null });
          throw conflict('invalid_state', 'The account is being terminated.');
        }
        const { row: op } = await ops.startOperation(tx, {
          type: 'account.move',
          resourceType: 'move',
          resourceId: id,
          accountId: account.id,
          resellerId: account.reseller_id,
        });
        await repo.insertMove(tx, {
          id,
          account_id: account.id,
          reseller_id: account.reseller_id,
          operation_id: op.id,
          from_servers: from,
          to_servers: to,
          cutover: input.cutover ?? 'auto',
          from_backup: input.from_backup ?? null,
          drain_of: drainOf,
        });
        const row = (await repo.findMoveById(tx, id)) as repo.MoveRow;
        await moveEvent(tx, 'account.move.started', row);
        await sendMoveJob(jobs, tx, op.id);
        return { ...toMove(row), operation: toOperation(op) };
      });
    },

    /** Before the cutover only: the source goes on as it was, the target keeps nothing. */
    async cancel(caller: Caller, id: string) {
      await load(caller, id);
      requireKind(caller, ['operator'], 'cancel moves');
      requireWritable(caller);
      return db.transaction(async (tx) => {
        const row = (await repo.findMoveById(tx, id, true)) as repo.MoveRow;
        if (row.cut_over_at || repo.ENDED.includes(row.status))
          throw conflict(
            'invalid_state',
            `The move is ${row.status}${row.cut_over_at ? ', past its cutover' : ''}; it cannot be canceled.`,
          );
        await repo.updateMove(tx, id, { cancel_requested: true });
        await sendMoveJob(jobs, tx, row.operation_id);
        return toMove((await repo.findMoveById(tx, id)) as repo.MoveRow);
      });
    },

    /** A `manual` move that is `ready` cuts over now. */
    async cutover(caller: Caller, id: string) {
      await load(caller, id);
      requireKind(caller, ['operator'], 'cut moves over');
      requireWritable(caller);
      return db.transaction(async (tx) => {
        const row = (await repo.findMoveById(tx, id, true)) as repo.MoveRow;
        if (row.cutover !== 'manual' || row.status !== 'ready')
          throw conflict(
            'invalid_state',
            `Only a manual move that is ready cuts over on request; this one is ${row.cutover}, ${row.status}.`,
          );
        await repo.updateMove(tx, id, { cutover_requested: true });
        await sendMoveJob(jobs, tx, row.operation_id);
        return toMove((await repo.findMoveById(tx, id)) as repo.MoveRow);
      });
    },
  };
}
export type MovesService = ReturnType<typeof movesService>;
