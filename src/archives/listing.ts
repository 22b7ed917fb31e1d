import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { inSlices } from '../lib/slices.js';
import type { ArchivedDir } from './pack.js';
import type { Unpacked } from './unpack.js';

/**
 * What a pack of some directories would hold, by archive name: the size and modification time
 * (ms) of each regular file and symbolic link (directories are implied by what they hold). Two
 * listings of the same directories tell what changed between them the way rsync's quick check
 * does: a name that is new, gone, or has another size or modification time.
 */
export const Listing = Type.Record(Type.String({ minLength: 1, maxLength: 4096 }), Type.Tuple([Type.Number(), Type.Number()]));
export type Listing = Static<typeof Listing>;

/**
 * An empty record by file name (a listing, hashes), without a prototype: a file named
 * `__proto__` is then a name like any other, where assigning it to an object's key would set
 * the object's prototype and lose the name. Its JSON is a plain object's.
 */
const byName = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/**
 * The listing of `dirs`, under their archive names. Links are listed, never followed; an entry
 * removed while it is listed is left out, as a pack leaves it out.
 */
export async function listTree(dirs: ArchivedDir[]): Promise<Listing> {
  const listing: Listing = byName();
  const walk = async (dir: string, name: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    await inSlices(entries, async (e) => {
      const at = path.join(dir, e.name);
      const as = name ? `${name}/${e.name}` : e.name;
      if (e.isDirectory()) return walk(at, as);
      if (!e.isFile() && !e.isSymbolicLink()) return;
      const st = await lstat(at).catch(() => null);
      if (st) listing[as] = [st.size, st.mtimeMs];
    });
  };
  for (const d of dirs) await walk(d.dir, d.as);
  return listing;
}

/** How many names a listing holds, and their bytes. */
export function listingTotals(listing: Listing): Unpacked {
  const sizes = Object.values(listing);
  return { files: sizes.length, bytes: sizes.reduce((n, [size]) => n + size, 0) };
}

/** What differs from `before` in `now`: names to copy again (new or changed) and names gone. */
export function changedSince(before: Listing, now: Listing): { changed: string[]; gone: string[] } {
  const changed = Object.keys(now).filter((n) => {
    const [a, b] = [Object.hasOwn(before, n) ? before[n] : undefined, now[n]];
    return !a || !b || a[0] !== b[0] || a[1] !== b[1];
  });
  return { changed, gone: Object.keys(before).filter((n) => !Object.hasOwn(now, n)) };
}

/** The SHA-256 (hex) of some listed names' files. */
export const Hashes = Type.Record(Type.String({ minLength: 1, maxLength: 4096 }), Type.String({ pattern: '^[0-9a-f]{64}$' }));
export type Hashes = Static<typeof Hashes>;

/** Not followed, and not waited on (a FIFO put in a file's place); what is not a regular file is skipped. */
const OPEN_FILE = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The SHA-256 of each of `names` (archive names, as listed) that is a regular file under `dirs`
 * now; the others are left out. What compares two copies' contents where their listings differ
 * only in time. A name whose directory leads outside its directory (a tenant's link put in
 * its place) is left out too, and the file itself is never followed.
 */
export async function hashNames(dirs: ArchivedDir[], names: string[]): Promise<Hashes> {
  const hashes: Hashes = byName();
  const roots = await Promise.all(dirs.map(async (d) => ({ ...d, real: await realpath(d.dir).catch(() => null) })));
  roots.sort((a, b) => b.as.length - a.as.length); // the most specific directory first
  const hashOne = async (name: string) => {
    const d = roots.find((r) => r.real && (r.as === '' || name.startsWith(`${r.as}/`)));
    if (!d?.real || !isInside(name)) return;
    const full = path.join(d.dir, d.as === '' ? name : name.slice(d.as.length + 1));
    const parent = await realpath(path.dirname(full)).catch(() => null);
    if (!parent || (parent !== d.real && !parent.startsWith(`${d.real}/`))) return;
    const handle = await open(full, OPEN_FILE).catch(() => null);
    if (!handle) return;
    try {
      if (!(await handle.stat()).isFile()) return;
      const hash = createHash('sha256');
      for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
      hashes[name] = hash.digest('hex');
    } finally {
      await handle.close();
    }
  };
  await inSlices(names, hashOne);
  return hashes;
}

/** Hashes another process sent, checked as a listing is. */
export function checkedHashes(value: unknown): Hashes {
  if (!Value.Check(Hashes, value)) throw new Error('the hashes are not hashes');
  return value;
}

/** A name relative and inside (no `..`, no absolute path, no NUL). */
export const isInside = (name: string) => {
  const normal = path.posix.normalize(name);
  return normal === name && !name.startsWith('/') && name !== '..' && !name.startsWith('../') && !name.includes('\0');
};

/**
 * A listing another process sent, checked: its names relative and inside (no `..`, no absolute
 * path), so that what is removed or compared by them stays under the copy's directory.
 */
export function checkedListing(value: unknown): Listing {
  if (!Value.Check(Listing, value)) throw new Error('the listing is not one');
  for (const name of Object.keys(value))
    if (!isInside(name)) throw new Error(`the listing names ${JSON.stringify(name.slice(0, 100))}, outside`);
  return value;
}

/**
 * A finished copy under `dir` checked against `listing`: the names whose file has another size,
 * or is missing (what it must not have), and the listing of the files and links it holds by those
 * names (what `listTree` gives of a copy that holds no other name: no second walk of it). `walked`,
 * what a walk of `dir` found of the names nothing wrote since, spares looking at those again.
 */
export async function differences(
  dir: string,
  listing: Listing,
  walked: Listing = byName(),
): Promise<{ wrong: string[]; held: Listing }> {
  const wrong: string[] = [];
  const held: Listing = byName();
  await inSlices(Object.keys(listing), async (n) => {
    const seen = Object.hasOwn(walked, n) ? walked[n] : undefined;
    if (seen) {
      if (seen[0] === listing[n]?.[0]) held[n] = seen;
      else wrong.push(n);
      return;
    }
    const st = await lstat(path.join(dir, n)).catch(() => null);
    if (!st || (st.isFile() && st.size !== listing[n]?.[0])) wrong.push(n);
    else if (st.isFile() || st.isSymbolicLink()) held[n] = [st.size, st.mtimeMs];
  });
  return { wrong: wrong.sort(), held };
}
