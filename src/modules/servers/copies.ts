import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { checkedHashes, checkedListing } from '../../archives/listing.js';
import { refreshCopy } from '../../archives/refresh.js';
import type { Db } from '../../db/client.js';
import type { Clock } from '../../lib/time.js';
import { type AgentTask, PACK_ONLY_MAX } from '../../provisioning/agent-units.js';
import { runAgentTask } from './tasks.js';

type PackTask = Extract<AgentTask, { action: 'site.pack' | 'mail.pack' }>;

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
  o: { maxBytes: number; keep?: { listingFile: string; verify: boolean } },
): Promise<void> {
  const fetch = (names: string[] | null, into: string) =>
    runAgentTask(deps.db, deps.clock, serverId, names && names.length <= PACK_ONLY_MAX ? { ...task, only: names } : task, {
      file: into,
      maxBytes: o.maxBytes,
      unpack: true,
    });
  if (!o.keep) return fetch(null, dest);
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
    await refreshCopy({ dest, listingFile: o.keep.listingFile, now, fetch, hashes, verify: o.keep.verify });
  } finally {
    await rm(file, { force: true });
  }
}
