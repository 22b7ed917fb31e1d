import { readdir, rename, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { isInside, listingTotals, listTree } from '../archives/listing.js';
import { moveInto } from '../archives/refresh.js';
import { unpackArchive } from '../archives/unpack.js';
import { accountHome, siteDir } from '../layout.js';
import { removeTree } from '../lib/remove-tree.js';
import type { AgentTask } from '../provisioning/agent-units.js';

type Received = Extract<AgentTask, { action: 'site.receive' | 'mail.receive' }>;
type Discard = Extract<AgentTask, { action: 'site.discard' | 'mail.discard' }>;

/**
 * Where a move's copy of a site waits on its new server before the cutover, by the release it
 * will land as: outside `releases/`, which every apply prunes to the live one.
 */
const stagedDir = (site: string) => path.join(site, '.staged');

/** Where a move's copy of an account's maildirs waits on its new mail server: beside its mail domains (no domain's name starts with a dot). */
export const stagedMail = (dataDir: string, accountId: string) =>
  path.join(accountHome(dataDir, path.basename(accountId)), 'mail', '.staged');
/** The staged maildirs and what a receive killed half-way leaves beside them. */
const stagedMailDirs = (dataDir: string, accountId: string) =>
  ['', '.partial', '.changes'].map((end) => `${stagedMail(dataDir, accountId)}${end}`);

const siteOf = (dataDir: string, t: { account_id: string; site_id: string }) =>
  siteDir(dataDir, path.basename(t.account_id), path.basename(t.site_id));

/** The control plane's own archive: no byte or ratio limit (a site may hold sparse files). */
const unpack = (input: Readable, into: string) =>
  unpackArchive({ stream: input }, 'tar.gz', into, { bytes: Number.MAX_SAFE_INTEGER, ratio: Number.POSITIVE_INFINITY });

/**
 * A move's copy of a site (as the release it will land as) or of the account's maildirs,
 * received ahead of its cutover while the old server still serves it.
 */
export async function receiveStaged(dataDir: string, task: Received, input: () => Promise<Readable>): Promise<void> {
  if (task.action === 'mail.receive') {
    const copy = stagedMail(dataDir, task.account_id);
    return receiveInto({ copy, partial: `${copy}.partial`, replaced: [copy] }, task, input);
  }
  const staged = stagedDir(siteOf(dataDir, task));
  const copy = path.join(staged, path.basename(task.release));
  const partial = path.join(staged, '.partial');
  return receiveInto({ copy, partial, replaced: [copy, ...(await listStaged(staged))] }, task, input);
}

/**
 * Whole the first time (every copy `replaced` goes), then only what changed (laid over `copy`,
 * the names gone removed), and checked against what the control plane holds (when it says): a
 * copy that differs fails the task. A whole copy is unpacked into `partial` and renamed into
 * place, so a crash leaves no half copy under the copy's name.
 */
async function receiveInto(
  at: { copy: string; partial: string; replaced: string[] },
  task: Received,
  input: () => Promise<Readable>,
): Promise<void> {
  const { copy, partial } = at;
  if (task.whole) {
    await removeTree(partial);
    await unpack(await input(), partial);
    for (const other of at.replaced) await removeTree(other);
    await rename(partial, copy);
  } else {
    const changes = `${copy}.changes`;
    await removeTree(changes);
    try {
      await unpack(await input(), changes);
      await moveInto(changes, copy);
    } finally {
      await removeTree(changes);
    }
    for (const name of task.gone ?? []) if (isInside(name)) await removeTree(path.join(copy, name));
  }
  const { expect } = task;
  if (!expect) return;
  const held = listingTotals(await listTree([{ dir: copy, as: '' }]));
  if (held.files !== expect.files || held.bytes !== expect.bytes)
    throw new Error(
      `the staged copy holds ${held.files} files (${held.bytes} bytes), not the ${expect.files} (${expect.bytes}) sent`,
    );
}

/** Every copy staged for a site, other than a partial one. */
const listStaged = async (staged: string) =>
  (await readdir(staged).catch(() => [] as string[])).filter((n) => n !== '.partial').map((n) => path.join(staged, n));

/**
 * A move that did not cut over leaves nothing of the account here: its staged copies go (a
 * site's, or the maildirs'), and the directories above them with them when nothing else is in
 * them (the account is not served here).
 */
export async function discardStaged(dataDir: string, task: Discard): Promise<void> {
  const home = accountHome(dataDir, path.basename(task.account_id));
  if (task.action === 'mail.discard') {
    for (const dir of stagedMailDirs(dataDir, task.account_id)) await removeTree(dir);
    return removeEmpty(path.dirname(stagedMail(dataDir, task.account_id)), home);
  }
  const site = siteOf(dataDir, task);
  await removeTree(stagedDir(site));
  return removeEmpty(site, home);
}

/** How long a staged copy is kept after it was last received whole (or a name added at its top). */
export const STAGED_KEPT_MS = 7 * 24 * 3600_000;

/**
 * Staged copies older than `keptMs` removed, with the directories above them up to an account's
 * home when nothing else is in them: what a move that rolled back while this server was away
 * left here. A move that waits longer than that for its cutover has its copy sent whole again at
 * its final copy (the changes alone no longer find it).
 */
export async function sweepStaged(dataDir: string, keptMs: number, now = Date.now()): Promise<void> {
  const accounts = path.join(dataDir, 'accounts');
  for (const account of await readdir(accounts).catch(() => [] as string[])) {
    const home = path.join(accounts, account);
    const sites = await readdir(path.join(home, 'sites')).catch(() => [] as string[]);
    const copies = [...stagedMailDirs(dataDir, account), ...sites.map((site) => stagedDir(path.join(home, 'sites', site)))];
    for (const dir of copies) {
      const found = await stat(dir).catch(() => null);
      if (!found || now - found.mtimeMs < keptMs) continue;
      await removeTree(dir);
      await removeEmpty(path.dirname(dir), home);
    }
  }
}

/** `dir`, then each directory above it up to `home`, each only if empty (rmdir fails otherwise). */
async function removeEmpty(dir: string, home: string): Promise<void> {
  for (; dir.length >= home.length; dir = path.dirname(dir)) {
    const removed = await rmdir(dir).then(
      () => true,
      () => false,
    );
    if (!removed) return;
  }
}

/** The copy staged for `release`, if one is here: a site's apply takes it rather than fetching the release. */
export const stagedCopy = (site: string, release: string) => path.join(stagedDir(site), path.basename(release));
