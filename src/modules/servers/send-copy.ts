import { readFile, rm } from 'node:fs/promises';
import { changedSince, checkedListing, type Listing, listingTotals, listTree } from '../../archives/listing.js';
import type { Db } from '../../db/client.js';
import type { Clock } from '../../lib/time.js';
import { type AgentTask, PACK_ONLY_MAX } from '../../provisioning/agent-units.js';
import { writeFileAtomic } from '../../provisioning/atomic-write.js';
import { LOCAL_SERVER_ID } from './repo.js';
import type { Role } from './schemas.js';
import { AgentTaskFailed, runAgentTask } from './tasks.js';

type Receive = Extract<AgentTask, { action: 'site.receive' | 'mail.receive' }>;
type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A receive task less what `sendCopy` works out. */
export type ReceiveTask = Without<Receive, 'whole' | 'only' | 'gone' | 'expect'>;

/** The server a move sends a role's copy ahead to: the one it moves to, unless that is this machine. */
export const sentAheadTo = (to: Partial<Record<Role, string>>, role: Role): string | null => {
  const server = to[role];
  return server && server !== LOCAL_SERVER_ID ? server : null;
};

/**
 * The directory `files` (here) sent on to a server's agent, which keeps it as a copy of its own
 * (a move's copy, ahead of the cutover): whole the first time, then only what changed since the
 * listing of what was sent last (kept in `sentFile`), and checked there against the totals of
 * what is here; changes the server cannot take are sent whole at once. A failed send forgets that
 * listing: what the server holds is not known then, and the next send is whole. `held`, the
 * listing of `files` if it is known (a final copy's, as verified), spares a walk of it. Returns
 * the totals sent.
 */
export async function sendCopy(
  deps: { db: Db; clock: Clock },
  serverId: string,
  task: ReceiveTask,
  files: string,
  sentFile: string,
  held?: Listing,
): Promise<{ files: number; bytes: number }> {
  const now = held ?? (await listTree([{ dir: files, as: '' }]));
  const before = await readFile(sentFile, 'utf8').catch(() => null);
  const since = before === null ? null : changedSince(checkedListing(JSON.parse(before)), now);
  const expect = listingTotals(now);
  const send = (spec: Receive) => runAgentTask(deps.db, deps.clock, serverId, spec, { file: files });
  const whole = { ...task, whole: true, expect } as Receive;
  try {
    if (!since || since.changed.length > PACK_ONLY_MAX || since.gone.length > PACK_ONLY_MAX) await send(whole);
    else
      await send({ ...task, whole: false, expect, only: since.changed, gone: since.gone }).catch(async (err: unknown) => {
        // The server no longer holds what was sent last (its staged copy swept, its disk replaced).
        if (!(err instanceof AgentTaskFailed)) throw err;
        await send(whole);
      });
  } catch (err) {
    await rm(sentFile, { force: true });
    throw err;
  }
  // Whole or not at all: a control plane killed as it writes leaves the last listing, never half of one.
  await writeFileAtomic(sentFile, JSON.stringify(now), 0o600);
  return expect;
}

/** How long a discard waits for its server (then what was sent stays there). */
const DISCARD_WAIT_MS = 60_000;

/**
 * What a move sent ahead to a server (by `sendCopy`, or a database's dump loaded there) discarded
 * there when the move rolls back. A server away keeps it,
 * under what it does not serve: the roll back does not wait for it longer than a minute.
 */
export async function discardCopy(
  deps: { db: Db; clock: Clock },
  serverId: string,
  task: Extract<AgentTask, { action: 'site.discard' | 'mail.discard' | 'database.discard' }>,
): Promise<void> {
  await runAgentTask(deps.db, deps.clock, serverId, task, { timeoutMs: DISCARD_WAIT_MS }).catch(() => undefined);
}
