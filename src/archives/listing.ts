import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import type { ArchivedDir } from './pack.js';

/**
 * What a pack of some directories would hold, by archive name: the size and modification time
 * (ms) of each regular file and symbolic link (directories are implied by what they hold). Two
 * listings of the same directories tell what changed between them the way rsync's quick check
 * does: a name that is new, gone, or has another size or modification time.
 */
export const Listing = Type.Record(Type.String({ minLength: 1, maxLength: 4096 }), Type.Tuple([Type.Number(), Type.Number()]));
export type Listing = Static<typeof Listing>;

/** Entries listed a slice at a time: each lstat is a round trip to libuv's thread pool. */
const SLICE = 64;

/**
 * The listing of `dirs`, under their archive names. Links are listed, never followed; an entry
 * removed while it is listed is left out, as a pack leaves it out.
 */
export async function listTree(dirs: ArchivedDir[]): Promise<Listing> {
  const listing: Listing = {};
  const walk = async (dir: string, name: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (let i = 0; i < entries.length; i += SLICE)
      await Promise.all(
        entries.slice(i, i + SLICE).map(async (e) => {
          const at = path.join(dir, e.name);
          const as = name ? `${name}/${e.name}` : e.name;
          if (e.isDirectory()) return walk(at, as);
          if (!e.isFile() && !e.isSymbolicLink()) return;
          const st = await lstat(at).catch(() => null);
          if (st) listing[as] = [st.size, st.mtimeMs];
        }),
      );
  };
  for (const d of dirs) await walk(d.dir, d.as);
  return listing;
}

/** What differs from `before` in `now`: names to copy again (new or changed) and names gone. */
export function changedSince(before: Listing, now: Listing): { changed: string[]; gone: string[] } {
  const changed = Object.keys(now).filter((n) => {
    const [a, b] = [before[n], now[n]];
    return !a || !b || a[0] !== b[0] || a[1] !== b[1];
  });
  return { changed, gone: Object.keys(before).filter((n) => !(n in now)) };
}

/**
 * A listing another process sent, checked: its names relative and inside (no `..`, no absolute
 * path), so that what is removed or compared by them stays under the copy's directory.
 */
export function checkedListing(value: unknown): Listing {
  if (!Value.Check(Listing, value)) throw new Error('the listing is not one');
  for (const name of Object.keys(value)) {
    const normal = path.posix.normalize(name);
    if (normal !== name || name.startsWith('/') || name === '..' || name.startsWith('../') || name.includes('\0'))
      throw new Error(`the listing names ${JSON.stringify(name.slice(0, 100))}, outside`);
  }
  return value;
}

/** Names of `listing` whose file under `dir` has another size, or is missing: what a finished copy must not have. */
export async function differences(dir: string, listing: Listing): Promise<string[]> {
  const names = Object.keys(listing);
  const wrong: string[] = [];
  for (let i = 0; i < names.length; i += SLICE)
    await Promise.all(
      names.slice(i, i + SLICE).map(async (n) => {
        const st = await lstat(path.join(dir, n)).catch(() => null);
        if (!st || (st.isFile() && st.size !== listing[n]?.[0])) wrong.push(n);
      }),
    );
  return wrong.sort();
}
