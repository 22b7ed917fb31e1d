import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bytesUnder } from '../../archives/pack.js';
import type { AccountShare, BackupPart, PartServers } from '../../contribution.js';
import { periodic } from '../../jobs/periodic.js';
import { publicMessage } from '../../lib/errors.js';
import { removeTree } from '../../lib/remove-tree.js';
import { removeWithdrawnFiles } from '../../provisioning/withdrawn-files.js';
import { type AccountMoves, findAccountById } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { type RoleRecords, serverAddresses, type ServerRecords } from '../domains/index.js';
import * as ops from '../operations/index.js';
import {
  findServerById,
  forwardAccount,
  type ForwardTargets,
  LOCAL_SERVER_ID,
  type Role,
  ROLES,
  serverStatus,
  withdrawAccount,
} from '../servers/index.js';
import { stageCopy } from './copy.js';
import { sendMoveJob } from './job.js';
import { sampledProgress } from './progress.js';
import * as repo from './repo.js';
import { moveEvent } from './representation.js';
import { MOVE_STEPS, type MoveStepName } from './schemas.js';
import type { BackupCopies } from './service.js';

const BEFORE_CUTOVER: MoveStepName[] = ['check', 'lower_ttl', 'copy', 'freeze', 'final_copy'];
/** How long the source may take to serve the account frozen before the move rolls back. */
const FREEZE_WAIT_MS = 120_000;
/**
 * How long one run of the thaw waits for the target to serve what was landed (its sites fetch
 * their releases); past it the step fails, and the move, past the cutover, is tried again. Within
 * the 15 minutes the queue gives one run of a job.
 */
const LANDED_WAIT_MS = 10 * 60_000;
/** The longest wait between two tries of a move past its cutover (see `nextTry`). */
const RETRY_MAX_MS = 5 * 60_000;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A move stopped on purpose (a cancel), not by a failure. */
class Canceled extends Error {}

const WAIT = Symbol('wait');
/** How often a copy's progress is looked at. */
const COPY_PROGRESS_EVERY_MS = 1000;
/** How often each process looks for moves whose forwarding is over. */
const FORWARDING_ENDS_EVERY_MS = 1000;

/**
 * Until when the source forwards: the lowered TTL after the cutover, and the longest TTL a
 * record had after the lowering (a resolver may hold the old address that long), whichever is later.
 */
export function forwardUntil(move: repo.MoveRow, loweredTtlS: number): string {
  const cutOver = Date.parse(move.cut_over_at as string) + loweredTtlS * 1000;
  const loweredAt = move.steps.find((s) => s.name === 'lower_ttl')?.ended_at;
  const longest = Math.max(0, ...Object.values(move.lowered_ttls));
  return new Date(Math.max(cutOver, loweredAt ? Date.parse(loweredAt) + longest * 1000 : 0)).toISOString();
}

/** Sends on the moves whose forwarding is over (each once, with the clock's time). */
export function forwardingEnds(deps: ServiceDeps, onError: (err: unknown) => void) {
  const { db, jobs, clock } = deps;
  return periodic(
    () =>
      db.transaction(async (tx) => {
        for (const move of await repo.endForwarding(tx, clock.now())) await sendMoveJob(jobs, tx, move.operation_id);
      }),
    FORWARDING_ENDS_EVERY_MS,
    onError,
  );
}

/**
 * The `account.move` job: runs the move's steps that are not done yet, in order, recording each,
 * so that a run after a crash resumes where the last one stopped (each step is safe to repeat).
 * Before the cutover a failure or a cancel rolls back (the account thawed, its TTLs restored, the
 * copy removed: the source goes on as it was); from the cutover on, the target is in charge and
 * the move is tried again until it completes (`nextTry`).
 */
export function moveRunner(
  deps: ServiceDeps,
  o: {
    accounts: AccountMoves;
    parts: readonly BackupPart[];
    shares: readonly AccountShare[];
    records: ServerRecords;
    backups: BackupCopies;
  },
) {
  const { db, clock, config, jobs } = deps;
  const stagingOf = (move: repo.MoveRow) => path.join(config.dataDir, 'staging', `move-${move.id}`);
  /** What the copy after the freeze compares with: the source as the last copy listed it. */
  const listingsOf = (move: repo.MoveRow) => `${stagingOf(move)}.listings`;

  /**
   * The parts whose role moves: the others' data stays where it is, untouched (a move of the web
   * role alone, even from a backup, leaves the mail and the databases as they are).
   */
  const partsOf = (move: repo.MoveRow) => o.parts.filter((p) => p.role && move.to_servers[p.role]);

  /** The account copied from the servers it leaves, into the staging (`final`: only what changed, verified). */
  async function copyOnce(move: repo.MoveRow, final: boolean): Promise<void> {
    const bytes = await stageCopy(partsOf(move), {
      accountId: move.account_id,
      from: move.from_servers,
      to: move.to_servers,
      staging: stagingOf(move),
      listings: listingsOf(move),
      final,
    });
    await repo.updateMove(db, move.id, { bytes_total: bytes, bytes_copied: bytes });
  }

  /** The staging and its listings removed (after the land, or a roll back). */
  const removeCopy = async (move: repo.MoveRow) => {
    await removeTree(stagingOf(move));
    await removeTree(listingsOf(move));
  };

  /** What the copy sent on to the target before the cutover dropped there, by what its listings say was sent. */
  async function discardSentAhead(move: repo.MoveRow): Promise<void> {
    const copy = { listings: listingsOf(move), final: false, to: move.to_servers };
    for (const part of partsOf(move)) await part.discardAhead?.(move.account_id, copy);
  }

  /** The records of the moved web and mail roles, from where to where they point. */
  async function roleRecords(move: repo.MoveRow): Promise<RoleRecords[]> {
    const roles = [];
    for (const role of ['web', 'mail'] as const) {
      const [from, to] = [move.from_servers[role], move.to_servers[role]];
      if (from && to) roles.push({ role, from: await serverAddresses(deps, from), to: await serverAddresses(deps, to) });
    }
    return roles;
  }

  /** Waits until every share of the roles in `servers` is applied where the account is placed. */
  async function untilApplied(accountId: string, servers: PartServers, ms: number, failure: string) {
    const shares = o.shares.filter((s) => servers[s.role]);
    for (const deadline = Date.now() + ms; ; await pause(100)) {
      if ((await Promise.all(shares.map((s) => s.applied(accountId)))).every(Boolean)) return;
      if (Date.now() > deadline) throw new Error(`${failure} within ${ms / 1000} s`);
    }
  }

  /**
   * A step that returns WAIT is not over: the move goes on when something else ends it (the
   * forwarding's end, `forwardingEnds`), without holding a worker meanwhile.
   */
  const steps: Record<MoveStepName, (move: repo.MoveRow) => Promise<void | typeof WAIT>> = {
    async check(move) {
      for (const role of ROLES) {
        const id = move.to_servers[role];
        const server = id ? await findServerById(db, id) : undefined;
        if (id && (!server || serverStatus(server, clock.now()) !== 'online'))
          throw new Error(`the target ${role} server is ${server ? serverStatus(server, clock.now()) : 'gone'}`);
      }
    },

    async lower_ttl(move) {
      // Each zone's old TTLs are recorded in the transaction that lowers them: a run after a crash
      // finds them lowered and recorded, and lowers the rest.
      await o.records.lowerTtl(
        move.account_id,
        await roleRecords(move),
        config.moveTtlS,
        (tx, had) => repo.recordLoweredTtls(tx, move.id, had),
        { afterZone: () => crashPoint('lower_ttl', 'inside') },
      );
    },

    async freeze(move) {
      // A run after a crash keeps the time the account was first frozen.
      if (!move.frozen_at)
        await db.transaction(async (tx) => {
          await o.accounts.freeze(tx, move.account_id, move.id, clock.now());
          await repo.updateMove(tx, move.id, { status: 'freezing', frozen_at: clock.now().toISOString() });
        });
      await crashPoint('freeze', 'inside');
      // The final copy waits until the source serves the account frozen: what it took until then is
      // in it. A move from a backup does not wait for a source that is away.
      if (move.from_backup) return;
      await untilApplied(move.account_id, move.from_servers, FREEZE_WAIT_MS, 'the source did not apply the freeze');
    },

    async copy(move) {
      // From a backup there is no source to copy from while it serves: the final copy unpacks it.
      if (move.from_backup) return;
      // A run after a crash starts again from nothing. What an earlier run sent ahead is dropped
      // first, while the listings still say what it was: a run that failed after removing them
      // would leave it on the target.
      await discardSentAhead(move);
      await removeCopy(move);
      // Progress in bytes: what has arrived in the staging, against the account's measured disk use.
      const total = await deps.diskInUse(move.account_id);
      await repo.updateMove(db, move.id, { bytes_total: total, bytes_copied: 0 });
      const progress = sampledProgress({
        measure: () => bytesUnder([stagingOf(move)]),
        record: (copied) => repo.updateMove(db, move.id, { bytes_copied: Math.min(copied, total) }),
        everyMs: COPY_PROGRESS_EVERY_MS,
      });
      try {
        await copyOnce(move, false);
      } finally {
        await progress.stop();
      }
    },

    async final_copy(move) {
      const staging = stagingOf(move);
      if (!move.from_backup) return copyOnce(move, true);
      await o.backups.unpack(move.from_backup, staging);
      const bytes = await bytesUnder([staging]);
      await repo.updateMove(db, move.id, { bytes_total: bytes, bytes_copied: bytes });
    },

    async cutover(move) {
      // One transaction: a run after a crash finds it committed (no second event, the same time).
      if (move.cut_over_at) return;
      await db.transaction(async (tx) => {
        for (const part of partsOf(move)) await part.cutOver?.(tx, move.account_id, stagingOf(move));
        await o.accounts.place(tx, move.account_id, move.id, move.to_servers);
        await repo.updateMove(tx, move.id, { status: 'cutting_over', cut_over_at: clock.now().toISOString() });
        await moveEvent(tx, 'account.move.cut_over', (await repo.findMoveById(tx, move.id)) as repo.MoveRow);
      });
    },

    async land(move) {
      for (const [i, part] of partsOf(move).entries()) {
        await part.land(move.account_id, stagingOf(move));
        if (i === 0) await crashPoint('land', 'inside');
      }
      await o.records.repoint(move.account_id, await roleRecords(move), move.lowered_ttls);
    },

    async thaw(move) {
      // Served again only once the target serves what was landed: its sites have their releases.
      await untilApplied(move.account_id, move.to_servers, LANDED_WAIT_MS, 'the target did not apply what was landed');
      await db.transaction((tx) => o.accounts.freeze(tx, move.account_id, move.id, null));
      await crashPoint('thaw', 'inside');
      await removeCopy(move);
    },

    async forward(move) {
      // A move from a backup left a source that is away: it is withdrawn once back.
      if (move.from_backup) return;
      const to = new Map<string, ForwardTargets>();
      for (const r of await roleRecords(move)) {
        const from = move.from_servers[r.role] as string;
        to.set(from, { ...(to.get(from) ?? { web: null, mail: null }), [r.role]: r.to.ipv4 ?? r.to.ipv6 });
      }
      if (![...to.values()].some((t) => t.web || t.mail)) return;
      // The local server forwards before the move says so: nothing ends the forwarding before it does.
      const here = to.get(LOCAL_SERVER_ID);
      for (const share of o.shares) {
        const target = share.role === 'database' ? null : here?.[share.role];
        if (target) await share.forwardLocal?.(move.account_id, target);
      }
      await crashPoint('forward', 'inside');
      await db.transaction(async (tx) => {
        for (const [serverId, targets] of to)
          if (serverId !== LOCAL_SERVER_ID) await forwardAccount(tx, serverId, move.account_id, targets);
        await repo.updateMove(tx, move.id, { status: 'forwarding', forward_until: forwardUntil(move, config.moveTtlS) });
      });
      return WAIT;
    },

    async cleanup(move) {
      const account = await findAccountById(db, move.account_id);
      if (!account) return;
      const left = new Map<string, Role[]>();
      for (const role of ROLES) {
        const from = move.from_servers[role];
        if (from) left.set(from, [...(left.get(from) ?? []), role]);
      }
      // Another server's agent is handed a withdrawal; the local server's share is taken away here.
      await db.transaction(async (tx) => {
        for (const [serverId, roles] of left)
          if (serverId !== LOCAL_SERVER_ID) await withdrawAccount(tx, serverId, account, roles);
      });
      await crashPoint('cleanup', 'inside');
      const here = left.get(LOCAL_SERVER_ID) ?? [];
      for (const share of o.shares) if (here.includes(share.role)) await share.withdrawLocal(account);
      if (here.length) await removeWithdrawnFiles(config.dataDir, account.id, here);
    },

    async restore_ttl(move) {
      const pointingAtTarget = (await roleRecords(move)).map((r) => ({ ...r, from: r.to }));
      await o.records.restoreTtl(move.account_id, pointingAtTarget, move.lowered_ttls, {
        afterZone: () => crashPoint('restore_ttl', 'inside'),
      });
    },
  };

  /**
   * When a move that failed past its cutover is tried again: after a tenth of the time since the
   * cutover, at least the queue's retry delay and at most RETRY_MAX_MS (a target away for
   * hours is asked every few minutes, a passing failure again within seconds).
   */
  const nextTry = (move: repo.MoveRow) => {
    const since = clock.now().getTime() - Date.parse(move.cut_over_at as string);
    return new Date(Date.now() + Math.min(Math.max(since / 10, config.jobRetryS * 1000), RETRY_MAX_MS));
  };

  /** Before the cutover: the source as it was, nothing of the copy kept. */
  async function rollBack(move: repo.MoveRow, failure: unknown): Promise<void> {
    const canceled = failure instanceof Canceled;
    await o.records.restoreTtl(move.account_id, await roleRecords(move), move.lowered_ttls);
    await discardSentAhead(move);
    await removeCopy(move);
    const error = canceled
      ? null
      : { code: 'move_failed', detail: failure instanceof Error ? publicMessage(failure) : 'unknown error' };
    await db.transaction(async (tx) => {
      await o.accounts.release(tx, move.account_id, move.id);
      await repo.updateMove(tx, move.id, {
        status: canceled ? 'canceled' : 'failed',
        error,
        completed_at: clock.now().toISOString(),
      });
      await moveEvent(
        tx,
        canceled ? 'account.move.canceled' : 'account.move.failed',
        (await repo.findMoveById(tx, move.id)) as repo.MoveRow,
      );
      await ops.transition(tx, move.operation_id, ['queued', 'running'], {
        status: canceled ? 'canceled' : 'failed',
        progress: 100,
        error,
      });
    });
  }

  async function complete(move: repo.MoveRow): Promise<void> {
    await db.transaction(async (tx) => {
      await o.accounts.release(tx, move.account_id, move.id);
      await repo.updateMove(tx, move.id, { status: 'completed', completed_at: clock.now().toISOString() });
      await moveEvent(tx, 'account.move.completed', (await repo.findMoveById(tx, move.id)) as repo.MoveRow);
      await ops.transition(tx, move.operation_id, ['queued', 'running'], { status: 'succeeded', progress: 100 });
    });
  }

  /**
   * Crash tests: the process kills itself (SIGKILL, as a power cut would stop it) once a step
   * named in BERTH_CRASH_AFTER_MOVE_STEPS has done its work (`forward`: set the forwarding up) and
   * before it is recorded as done, or halfway through one named in BERTH_CRASH_INSIDE_MOVE_STEPS
   * (`freeze`: frozen, the source not yet serving it so; `land`: its first part landed; `thaw`:
   * thawed, the copy not yet removed; `lower_ttl` and `restore_ttl`: the account's first zone
   * changed, not the others; `forward`: the local server forwarding, the move not yet recorded
   * so; `cleanup`: the other servers' withdrawals recorded, the local server's share not yet
   * removed), so the process started again runs the step a second time.
   * Once per point and data directory (a marker file): the second run goes on.
   */
  async function crashPoint(step: MoveStepName, where: 'after' | 'inside' = 'after'): Promise<void> {
    if (!(where === 'after' ? config.crashAfterMoveSteps : config.crashInsideMoveSteps).includes(step)) return;
    const marked = await writeFile(path.join(config.dataDir, `crashed-${where}-${step}`), '', { flag: 'wx' }).then(
      () => true,
      () => false,
    );
    if (marked) process.kill(process.pid, 'SIGKILL');
  }

  async function runOnce(operationId: string): Promise<void> {
    const op = await ops.findOperationById(db, operationId);
    if (!op || !['queued', 'running'].includes(op.status)) return;
    const found = await repo.findMoveById(db, op.resource_id);
    if (!found || repo.ENDED.includes(found.status)) return;
    const id = found.id;
    const reread = async () => (await repo.findMoveById(db, id)) as repo.MoveRow;
    await ops.transition(db, op.id, ['queued', 'running'], { status: 'running' });
    if (found.status === 'queued') await repo.updateMove(db, id, { status: 'copying' });
    try {
      for (const [i, name] of MOVE_STEPS.entries()) {
        const move = await reread();
        if (move.steps[i]?.state === 'done' || move.steps[i]?.state === 'skipped') continue;
        if (!move.cut_over_at && move.cancel_requested) throw new Canceled();
        // A manual move waits, unfrozen, for its cutover: the request sends this job again.
        if (name === 'freeze' && move.cutover === 'manual' && !move.cutover_requested) {
          if (move.status !== 'ready')
            await db.transaction(async (tx) => {
              await repo.updateMove(tx, id, { status: 'ready' });
              await moveEvent(tx, 'account.move.ready', (await repo.findMoveById(tx, id)) as repo.MoveRow);
            });
          return;
        }
        await repo.markStep(db, id, name, 'running', clock.now());
        const outcome = await steps[name](move);
        await crashPoint(name);
        if (outcome === WAIT) return;
        await repo.markStep(db, id, name, 'done', clock.now());
        await ops.transition(db, op.id, ['running'], {
          status: 'running',
          progress: Math.round((100 * (i + 1)) / (MOVE_STEPS.length + 1)),
        });
      }
      await complete(await reread());
    } catch (err) {
      const current = await reread();
      if (current.cut_over_at && !(err instanceof Canceled)) {
        // The target is in charge: the move is tried again for as long as it takes (the queue's
        // own retries run out after five), each try recorded with the failure that calls for it.
        await db.transaction(async (tx) => {
          await repo.updateMove(tx, id, {
            error: { code: 'move_retrying', detail: err instanceof Error ? publicMessage(err) : 'unknown error' },
          });
          await sendMoveJob(jobs, tx, op.id, nextTry(current));
        });
        return;
      }
      const running = current.steps.find((s) => s.state === 'running');
      if (running && BEFORE_CUTOVER.includes(running.name)) await repo.markStep(db, id, running.name, 'failed', clock.now());
      await rollBack(current, err);
    }
  }

  /**
   * One run of a move at a time, across every process: a cancel or a cutover sends the job again
   * while a run may be under way (in another process, or another of this one's workers), and the
   * second run must not roll back, or go on, beside the first. It waits for the first to end,
   * then reads what that left: the first acts on the request at its next step, and the second
   * finds the move ended or goes on from there. A wake is never lost to the wait.
   */
  return (operationId: string): Promise<void> => db.withSessionLock(`account.move:${operationId}`, () => runOnce(operationId));
}
