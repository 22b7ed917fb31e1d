import { lstat, mkdir, readFile, rename, utimes } from 'node:fs/promises';
import path from 'node:path';
import { removeTree } from '../lib/remove-tree.js';
import { inSlices } from '../lib/slices.js';
import { writeFileAtomic } from '../provisioning/atomic-write.js';
import { changedSince, checkedListing, differences, type Hashes, hashNames, type Listing, listTree } from './listing.js';

export interface RefreshOptions {
  /** The copy, a directory of this process's. */
  dest: string;
  /** Where the source's listing of the last refresh is kept (outside `dest`). */
  listingFile: string;
  /** The source's listing now, taken before anything is fetched. */
  now: Listing;
  /** Puts these names of the source (null: all of it) into `into`, a directory made for them. */
  fetch: (names: string[] | null, into: string) => Promise<void>;
  /** Fail unless the copy has every file of `now` at its size (the source no longer changes). */
  verify?: boolean;
  /** The source's SHA-256 of these names' files (hashNames): a changed name the copy holds at its size is compared by it. */
  hashes?: (names: string[]) => Promise<Hashes>;
}

/**
 * Brings a copy up to date with its source. The first time everything is fetched; after that,
 * only the names whose size or modification time differ from the last refresh's listing (and,
 * with `hashes`, whose content differs where the size is the same), and what the source no
 * longer has is removed. The listing is taken before the fetch, so a file
 * that changes while it is fetched differs from it next time and is fetched again. With `verify`,
 * returns the copy's own listing, as checked (it holds only the names of `now` then); else null.
 */
export async function refreshCopy(o: RefreshOptions): Promise<Listing | null> {
  const before = await readListing(o.listingFile);
  /** What the copy held before the fetch, of the names the fetch does not write. */
  let kept: Listing | undefined;
  if (!before) {
    await removeTree(o.dest);
    await mkdir(o.dest, { recursive: true });
    await o.fetch(null, o.dest);
  } else {
    // What is gone, by what the copy holds: a name fetched after the last listing was taken is
    // in the copy and not in that listing.
    kept = await listTree([{ dir: o.dest, as: '' }]);
    for (const name of Object.keys(kept))
      if (!Object.hasOwn(o.now, name)) {
        await removeTree(path.join(o.dest, name));
        delete kept[name];
      }
    const candidates = changedSince(before, o.now).changed;
    for (const name of candidates) delete kept[name]; // fetched again, or given the source's time
    const changed = await differingContent(o, candidates);
    if (changed.length > 0) {
      const into = `${o.dest}.changes`;
      await removeTree(into);
      await mkdir(into, { recursive: true });
      try {
        await o.fetch(changed, into);
        await moveInto(into, o.dest);
      } finally {
        await removeTree(into);
      }
    }
  }
  // Whole or not at all: a process killed as it writes leaves the last listing, never half of one.
  await writeFileAtomic(o.listingFile, JSON.stringify(o.now), 0o600);
  if (!o.verify) return null;
  const { wrong, held } = await differences(o.dest, o.now, kept);
  if (wrong.length > 0) throw new Error(`the copy differs from the source in ${wrong.length} files (${wrong[0]} first)`);
  return held;
}

/**
 * Of the names whose size or time changed, those whose content differs (rsync's `-c` for
 * these alone): a file the copy holds at the source's size is fetched only if the source's
 * SHA-256 is another (a file rewritten the same, a `touch`), and otherwise given the source's
 * time. Without `hashes`, all of them.
 */
async function differingContent(o: RefreshOptions, changed: string[]): Promise<string[]> {
  if (!o.hashes || changed.length === 0) return changed;
  const sameSize: string[] = [];
  await inSlices(changed, async (name) => {
    const st = await lstat(path.join(o.dest, name)).catch(() => null);
    if (st?.isFile() && st.size === o.now[name]?.[0]) sameSize.push(name);
  });
  if (sameSize.length === 0) return changed;
  const [theirs, ours] = await Promise.all([o.hashes(sameSize), hashNames([{ dir: o.dest, as: '' }], sameSize)]);
  const same = new Set(sameSize.filter((n) => Object.hasOwn(theirs, n) && theirs[n] === ours[n]));
  await inSlices([...same], async (name) => {
    const at = (o.now[name]?.[1] ?? 0) / 1000;
    await utimes(path.join(o.dest, name), at, at);
  });
  return changed.filter((n) => !same.has(n));
}

const readListing = async (file: string): Promise<Listing | null> => {
  const text = await readFile(file, 'utf8').catch(() => null);
  return text === null ? null : checkedListing(JSON.parse(text));
};

/** Each file and link under `from` put in its place under `to`, replacing what is there. */
export async function moveInto(from: string, to: string): Promise<void> {
  for (const name of Object.keys(await listTree([{ dir: from, as: '' }]))) {
    const target = path.join(to, name);
    await mkdir(path.dirname(target), { recursive: true });
    await removeTree(target); // a directory in its place, once
    await rename(path.join(from, name), target);
  }
}
