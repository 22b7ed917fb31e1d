import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { checkedHashes, checkedListing, type Listing, listTree } from '../../archives/listing.js';
import { refreshCopy } from '../../archives/refresh.js';
import type { Db } from '../../db/client.js';
import type { Clock } from '../../lib/time.js';
import { type AgentTask, PACK_ONLY_MAX } from '../../provisioning/agent-units.js';
import { writeFileAtomic } from '../../provisioning/atomic-write.js';
import type { ReceiveTask } from './send-copy.js';
import { relayedTask, runAgentTask, type TaskOptions } from './tasks.js';

type PackTask = Extract<AgentTask, { action: 'site.pack' | 'mail.pack' }>;

/** Where a move's copy goes on to (send-copy.ts), relayed there as it arrives when it is fetched whole. */
export interface RelayTo {
  serverId: string;
  task: ReceiveTask;
  /** What `sendCopy` keeps of what that server holds: the copy here, once the relay got there. */
  sentFile: string;
}

/** A listing is a few dozen bytes per file; this bounds what a server may send for one. */
const LISTING_MAX_BYTES = 256 * 1024 * 1024;

/**
 * What a pack task packs on a server, brought here through its agent into `dest`: unpacked as
 * it arrives, at most `maxBytes` of files. With `keep` (a move's copy), `dest` is a copy kept up
 * to date (archives/refresh.ts): the agent lists the files first (into a file beside `dest`), and
 * only the names that changed since the last copy are packed (all of them when more than
 * PACK_ONLY_MAX did); those the copy holds at the same size are hashed there first, and packed
 * only if their content differs.
 */
export async function copyFromServer(
  deps: { db: Db; clock: Clock },
  serverId: string,
  task: PackTask,
  dest: string,
  o: { maxBytes: number; keep?: { listingFile: string; verify: boolean }; relay?: RelayTo },
): Promise<Listing | null> {
  const fetch = (names: string[] | null, into: string) => {
    const spec = names && names.length <= PACK_ONLY_MAX ? { ...task, only: names } : task;
    const options = { file: into, maxBytes: o.maxBytes, unpack: true };
    if (names === null && o.relay) return relayed(deps, { serverId, spec, options }, o.relay);
    return runAgentTask(deps.db, deps.clock, serverId, spec, options);
  };
  if (!o.keep) {
    await fetch(null, dest);
    return null;
  }
  const file = `${dest}.listing.json`;
  /** What a listing or hashing task sends: JSON, read from `file`. */
  const answer = async (spec: PackTask) => {
    await runAgentTask(deps.db, deps.clock, serverId, spec, { file, maxBytes: LISTING_MAX_BYTES });
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  };
  const hashes = async (names: string[]) =>
    names.length > PACK_ONLY_MAX ? {} : checkedHashes(await answer({ ...task, hash: names }));
  await mkdir(path.dirname(file), { recursive: true });
  try {
    const now = checkedListing(await answer({ ...task, list: true }));
    return await refreshCopy({ dest, listingFile: o.keep.listingFile, now, fetch, hashes, verify: o.keep.verify });
  } finally {
    await rm(file, { force: true });
  }
}

/**
 * A whole copy fetched into `options.file` and, as it arrives, received by the server it goes on
 * to (relay.ts): the first send ahead then finds nothing to send but checks what that server
 * holds. Should that server fail or fall behind, the copy here still completes, and the send
 * ahead sends it whole.
 */
async function relayed(
  deps: { db: Db; clock: Clock },
  from: { serverId: string; spec: PackTask; options: TaskOptions & { file: string } },
  to: RelayTo,
): Promise<void> {
  // Whatever that server held is replaced: until the relay gets there, it is not known.
  await rm(to.sentFile, { force: true });
  const received = await relayedTask(deps, from, { serverId: to.serverId, spec: { ...to.task, whole: true } });
  if (received) await writeFileAtomic(to.sentFile, JSON.stringify(await listTree([{ dir: from.options.file, as: '' }])), 0o600);
}
