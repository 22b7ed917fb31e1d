import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { cp, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changedSince, checkedHashes, checkedListing, hashNames, listTree } from '../../src/archives/listing.js';
import { archiveStream } from '../../src/archives/pack.js';
import { refreshCopy } from '../../src/archives/refresh.js';
import { unpackArchive } from '../../src/archives/unpack.js';

let root: string;
let src: string;
let dest: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'berth-refresh-'));
  src = path.join(root, 'src');
  dest = path.join(root, 'copy');
  mkdirSync(path.join(src, 'a', 'b'), { recursive: true });
  writeFileSync(path.join(src, 'index.php'), '<?php echo 1;');
  writeFileSync(path.join(src, 'a', 'b', 'deep.txt'), 'deep');
  writeFileSync(path.join(src, 'a', 'gone.txt'), 'to be deleted');
  symlinkSync('a/b/deep.txt', path.join(src, 'link'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Every file and link under `dir` with its content (a link: where it points); not by assignment, which would lose a name `__proto__`. */
const tree = (dir: string): Record<string, string> =>
  Object.fromEntries(
    (readdirSync(dir, { recursive: true }) as string[])
      .map((name) => path.join(dir, name))
      .filter((p) => !lstatSync(p).isDirectory())
      .map((p) => [path.relative(dir, p), lstatSync(p).isSymbolicLink() ? `-> ${readlinkSync(p)}` : readFileSync(p, 'utf8')]),
  );

/**
 * A refresh of `dest` from `src` on this machine, recording what each fetch asked for (and, with
 * `hashed`, each hashing). Verified, what it returns is the copy's listing, as a walk gives it.
 */
async function refresh(asked: (string[] | null)[], verify = false, hashed?: string[][]) {
  const held = await refreshCopy({
    hashes: hashed
      ? (names) => {
          hashed.push(names);
          return hashNames([{ dir: src, as: '' }], names);
        }
      : undefined,
    dest,
    listingFile: path.join(root, 'listing.json'),
    now: await listTree([{ dir: src, as: '' }]),
    fetch: async (names, into) => {
      asked.push(names);
      if (!names) return cp(src, into, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
      for (const n of names) {
        await mkdir(path.dirname(path.join(into, n)), { recursive: true });
        await cp(path.join(src, n), path.join(into, n), { verbatimSymlinks: true, preserveTimestamps: true });
      }
    },
    verify,
  });
  expect(held).toEqual(verify ? await listTree([{ dir: dest, as: '' }]) : null);
}

describe('a copy kept up to date (a move’s)', () => {
  it('is fetched whole the first time, then only what changed; what the source no longer has goes', async () => {
    const asked: (string[] | null)[] = [];
    await refresh(asked);
    expect(asked).toEqual([null]);
    expect(tree(dest)).toEqual(tree(src));

    // Changed (another size), new, deleted; the rest untouched.
    writeFileSync(path.join(src, 'index.php'), '<?php echo 22;');
    writeFileSync(path.join(src, 'a', 'b', 'new.txt'), 'new');
    rmSync(path.join(src, 'a', 'gone.txt'));
    const before = statSync(path.join(dest, 'a', 'b', 'deep.txt')).ino;
    await refresh(asked, true);
    expect(asked[1]?.sort()).toEqual(['a/b/new.txt', 'index.php']);
    expect(tree(dest)).toEqual(tree(src));
    expect(statSync(path.join(dest, 'a', 'b', 'deep.txt')).ino).toBe(before);

    // Nothing changed: nothing fetched.
    await refresh(asked, true);
    expect(asked).toHaveLength(2);
  });

  it('fetches a file again when only its modification time moved, and a directory that became a file', async () => {
    const asked: (string[] | null)[] = [];
    await refresh(asked);
    writeFileSync(path.join(src, 'index.php'), '<?php echo 2;'); // same size
    utimesSync(path.join(src, 'index.php'), new Date(), new Date(Date.now() + 5000));
    rmSync(path.join(src, 'a'), { recursive: true });
    writeFileSync(path.join(src, 'a'), 'a file now');
    await refresh(asked, true);
    expect(asked[1]?.sort()).toEqual(['a', 'index.php']);
    expect(tree(dest)).toEqual(tree(src));
  });

  it('with hashes, fetches a file whose size is the same only if its content differs; one rewritten the same gets the source’s time', async () => {
    const asked: (string[] | null)[] = [];
    const hashed: string[][] = [];
    await refresh(asked, false, hashed);
    const later = new Date(Date.now() + 5000);
    utimesSync(path.join(src, 'index.php'), later, later); // touched: the same bytes
    writeFileSync(path.join(src, 'a', 'b', 'deep.txt'), 'DEEP'); // the same size, other bytes
    writeFileSync(path.join(src, 'a', 'gone.txt'), 'another size'); // hashed by nobody
    await refresh(asked, true, hashed);
    expect(hashed.map((names) => names.sort())).toEqual([['a/b/deep.txt', 'index.php']]);
    expect(asked[1]?.sort()).toEqual(['a/b/deep.txt', 'a/gone.txt']);
    expect(tree(dest)).toEqual(tree(src));
    expect(statSync(path.join(dest, 'index.php')).mtimeMs).toBeCloseTo(later.getTime(), -1);
  });

  it('hashes only regular files inside: a link, a name outside and a directory swapped for a link are left out', async () => {
    const outside = path.join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    rmSync(path.join(src, 'a', 'b'), { recursive: true });
    symlinkSync(outside, path.join(src, 'a', 'b'));
    const hashes = await hashNames(
      [{ dir: src, as: 'site' }],
      ['site/index.php', 'site/link', 'site/a/b/secret.txt', 'site/../outside/secret.txt', 'other/index.php'],
    );
    expect(Object.keys(hashes)).toEqual(['site/index.php']);
    expect(checkedHashes(hashes)).toEqual(hashes);
    expect(() => checkedHashes({ 'index.php': 'not a hash' })).toThrow();
  });

  it('stopped half-way (a process killed, a fetch failed), comes right the next time', async () => {
    const asked: (string[] | null)[] = [];
    // A fetch that has put one file in place when it dies.
    const killed = async () =>
      refreshCopy({
        dest,
        listingFile: path.join(root, 'listing.json'),
        now: await listTree([{ dir: src, as: '' }]),
        fetch: async (_names, into) => {
          await cp(path.join(src, 'index.php'), path.join(into, 'index.php'));
          throw new Error('killed');
        },
      });
    await expect(killed()).rejects.toThrow('killed');
    await refresh(asked, true);
    expect(tree(dest)).toEqual(tree(src));
    writeFileSync(path.join(src, 'a', 'b', 'deep.txt'), 'deeper');
    rmSync(path.join(src, 'a', 'gone.txt'));
    await expect(killed()).rejects.toThrow('killed');
    await refresh(asked, true);
    expect(asked.at(-1)).toEqual(['a/b/deep.txt']);
    expect(tree(dest)).toEqual(tree(src));
  });

  it('fails its verification when the copy does not hold what the source lists', async () => {
    const copy = refreshCopy({
      dest,
      listingFile: path.join(root, 'listing.json'),
      now: await listTree([{ dir: src, as: '' }]),
      fetch: async (_names, into) => writeFileSync(path.join(into, 'index.php'), 'short'),
      verify: true,
    });
    await expect(copy).rejects.toThrow('the copy differs from the source in 4 files (a/b/deep.txt first)');
  });

  it('fails its verification when a file the copy kept was cut short or lost since it was fetched', async () => {
    await refresh([]);
    writeFileSync(path.join(dest, 'index.php'), 'short');
    rmSync(path.join(dest, 'a', 'b', 'deep.txt'));
    await expect(refresh([], true)).rejects.toThrow('the copy differs from the source in 2 files (a/b/deep.txt first)');
  });

  it('takes names an object already has (toString, constructor) as any other: changed, verified, gone', async () => {
    writeFileSync(path.join(src, 'toString'), 'one');
    writeFileSync(path.join(src, 'constructor'), 'two');
    await refresh([]);
    writeFileSync(path.join(src, 'toString'), 'three');
    rmSync(path.join(src, 'constructor'));
    await refresh([], true);
    expect(tree(dest)).toEqual(tree(src));
  });

  it('takes a file named __proto__ as any other: listed, changed, compared by hash, verified, gone', async () => {
    writeFileSync(path.join(src, '__proto__'), 'one');
    const listed = await listTree([{ dir: src, as: '' }]);
    expect(Object.keys(listed)).toContain('__proto__');
    expect(Object.keys(checkedListing(JSON.parse(JSON.stringify(listed))))).toContain('__proto__');
    await refresh([]);
    expect(Object.entries(tree(dest))).toContainEqual(['__proto__', 'one']);
    writeFileSync(path.join(src, '__proto__'), 'two');
    utimesSync(path.join(src, '__proto__'), 1, 1);
    const hashed: string[][] = [];
    await refresh([], true, hashed);
    expect(hashed).toEqual([['__proto__']]);
    expect(tree(dest)).toEqual(tree(src));
    rmSync(path.join(src, '__proto__'));
    await refresh([], true);
    expect(tree(dest)).toEqual(tree(src));
  });

  it('refuses a listing that names a path outside', () => {
    expect(() => checkedListing({ '../etc/passwd': [1, 1] })).toThrow(/outside/);
    expect(() => checkedListing({ '/etc/passwd': [1, 1] })).toThrow(/outside/);
    expect(() => checkedListing({ 'a/../../b': [1, 1] })).toThrow(/outside/);
    expect(() => checkedListing({ a: [1] })).toThrow();
    expect(checkedListing({ 'a/b.txt': [1, 2] })).toEqual({ 'a/b.txt': [1, 2] });
  });

  it('tells new, changed and gone names apart from the unchanged', () => {
    expect(changedSince({ a: [1, 1], b: [2, 2], c: [3, 3] }, { a: [1, 1], b: [2, 3], d: [4, 4] })).toEqual({
      changed: ['b', 'd'],
      gone: ['c'],
    });
  });

  it('packs only the names asked for, and every directory', async () => {
    const into = path.join(root, 'unpacked');
    await unpackArchive(
      { stream: archiveStream(root, [{ dir: src, as: '' }], { only: new Set(['a/b/deep.txt', 'link']) }) },
      'tar.gz',
      into,
      {
        bytes: 1 << 20,
        ratio: Number.POSITIVE_INFINITY,
      },
    );
    expect(tree(into)).toEqual({ 'a/b/deep.txt': 'deep', link: '-> a/b/deep.txt' });
  });
});
