import { constants, type Dirent, existsSync, type Stats } from 'node:fs';
import { lstat, open, readdir, readlink, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { inSlices } from '../lib/slices.js';
import { keep, take } from './buffer-pool.js';
import { GzipBlocks } from './parallel-gzip.js';
import { BLOCK, tarPadding } from './tar-format.js';
import { TAR_END, tarHeader, type TarMember } from './tar-header.js';

/** One directory of the account, stored in the archive under `as` (`''`: at the archive's root). */
export interface ArchivedDir {
  dir: string;
  as: string;
}

/**
 * A tar.gz of `dirs`, each under its archive name, packed as it is read (never the whole archive
 * in memory): the next few files are opened and their first 128 KiB read ahead of their turn,
 * the rest of a longer file straight into the compressor's blocks, which are compressed in
 * parallel (parallel-gzip.ts). Its chunks are one reused buffer: **each is valid until the next
 * is asked for** (`archiveStream` copies them, for a consumer that keeps them).
 *
 * Directories, regular files (hard links by inode) and symbolic links (stored as links, never
 * followed) are packed, in name order; sockets, FIFOs and devices
 * have nothing to back up and a restore would refuse them, so they are left out. A file or
 * directory removed while the backup runs is left out, as GNU tar does; a file that shrinks is
 * padded with zeros to the size it was listed with.
 *
 * The directories may belong to a tenant who runs code (PHP) while the backup reads them, and
 * Berth reads as a more privileged user: a directory swapped for a link to `/etc` must not put
 * `/etc` in the archive. So each of `dirs` is opened and checked to be where it should be, and
 * everything below is reached through its parent's open descriptor (`/proc/self/fd/N/name`:
 * `openat` for Node; by path where there is no /proc) with the last component never followed;
 * a file is read only if it is still the regular file that was listed.
 *
 * `root` is the data directory (Berth's own, trusted): each of `dirs` must lie under it.
 */
export function packArchive(
  root: string,
  dirs: ArchivedDir[],
  onEntry: (entry: { type: TarMember['type']; size: number }) => void,
  o: PackOptions = {},
): AsyncIterable<Buffer> {
  return new TarPacker(onEntry, o).pack(root, dirs);
}

/**
 * gzip's level for what a server and the control plane send each other to unpack at once (a
 * move's copy either way, a backup's files, packed again there at the backup's level): stored
 * blocks. In the move benchmark, relayed in one pass, the source's agent packing half-text files
 * at level 1 held the copy to one full core and 56 MB/s, against 80 stored (bench/HISTORY.md,
 * "2026-12-02, afternoon"): less than a link between a provider's servers carries.
 */
export const TRANSFER_LEVEL = 0;

/**
 * `only`: the files and links of those archive names alone (every directory still comes): a
 * copy's changes since its listing. `level`: gzip's (default 6; 0 stores, for an archive
 * unpacked again on this machine at once, where compressing would only cost).
 */
export interface PackOptions {
  only?: ReadonlySet<string>;
  level?: number;
}

/** `packArchive` as a stream of chunks of their own. */
export function archiveStream(root: string, dirs: ArchivedDir[], o: PackOptions = {}): Readable {
  return Readable.from(
    (async function* copies() {
      for await (const chunk of packArchive(root, dirs, () => undefined, o)) yield Buffer.from(chunk);
    })(),
    { objectMode: false },
  );
}

/** Entries whose disappearance during a backup leaves them out rather than failing it. */
const GONE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);
const code = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? '';
const gone = (err: unknown): null => {
  if (GONE.has(code(err))) return null;
  throw err;
};
const STAT_SLICE = 64;
const ZEROS = Buffer.alloc(BLOCK);
const PROC_FD = existsSync('/proc/self/fd');
const OPEN_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Non-blocking, so that a FIFO put in a file's place cannot hold the open; then refused by its fstat. */
const OPEN_FILE = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/**
 * Files opened, and their first bytes read, ahead of their turn. Read one after another, files
 * not in the page cache (a nightly backup's usual case) cost a disk round trip each, the disk
 * otherwise idle: 500 MB in 5,120 files took a second longer to pack than from the cache.
 */
const AHEAD = 8;
/** The head read ahead: all of most web files; a longer file's rest follows in the kernel's readahead. */
const HEAD_BYTES = 128 * 1024;

/** A file opened ahead of its turn, still the regular file that was listed, with its first bytes. */
interface Opened {
  handle: FileHandle;
  st: Stats;
  head: Buffer;
  headBytes: number;
}

class TarPacker {
  private readonly gz: GzipBlocks;
  /** The archive name of the first member of each inode with several links (`dev:ino`). */
  private readonly linked = new Map<string, string>();
  private readonly only?: ReadonlySet<string>;

  constructor(
    private readonly onEntry: (entry: { type: TarMember['type']; size: number }) => void,
    o: PackOptions,
  ) {
    this.only = o.only;
    this.gz = new GzipBlocks(o.level === undefined ? {} : { zlib: { level: o.level } });
  }

  /** Whether a file or link of this archive name is packed. */
  private wanted(name: string): boolean {
    return !this.only || this.only.has(name);
  }

  async *pack(root: string, dirs: ArchivedDir[]): AsyncGenerator<Buffer> {
    const realRoot = await realpath(root);
    for (const d of dirs) yield* this.dir(path.join(realRoot, path.relative(root, d.dir)), d.as, true);
    this.gz.write(TAR_END);
    yield* this.gz.end();
  }

  /**
   * The directory at `at`: one of `dirs` (a path, `given`) or `/proc/self/fd/N/name` below one.
   * The components above one of `dirs` are not held open: one replaced by a link fails the
   * backup (the message names the archive's directory, not the server's path).
   */
  private async *dir(at: string, name: string, given = false): AsyncGenerator<Buffer> {
    const elsewhere = () => new Error(`the directory archived as "${name || '.'}" leads elsewhere (through a link)`);
    const handle = await open(at, OPEN_DIR).catch((err: unknown) => {
      if (given && ['ELOOP', 'ENOTDIR'].includes(code(err))) throw elsewhere(); // a link (or a file) in its place
      return gone(err);
    });
    if (!handle) return;
    try {
      const st = await handle.stat();
      const inside = PROC_FD ? `/proc/self/fd/${handle.fd}` : at;
      if (PROC_FD && given && (await readlink(inside)) !== at) throw elsewhere();
      this.member({ type: 'Directory', path: name ? `${name}/` : './', mode: st.mode, size: 0, mtimeMs: st.mtimeMs });
      const names = this.toLook(name, (await readdir(inside, { withFileTypes: true }).catch(gone)) ?? []);
      for (let i = 0; i < names.length; i += STAT_SLICE) {
        const slice = names.slice(i, i + STAT_SLICE);
        // A slice at a time, not one by one: each lstat is a round trip to libuv's thread pool.
        const stats = await Promise.all(slice.map((n) => lstat(path.join(inside, n)).catch(gone)));
        yield* this.entries(inside, name, slice, stats);
      }
    } finally {
      await handle.close();
    }
  }

  /**
   * A directory's names to look at, sorted. With `only`, the files and links not wanted are left
   * out before any `lstat` (their type is the directory's to tell): a few changed files among
   * thousands cost a few `lstat`s, not thousands (a move's final copy, while the account is frozen).
   */
  private toLook(name: string, entries: Dirent[]): string[] {
    const unwanted = (e: Dirent) => (e.isFile() || e.isSymbolicLink()) && !this.wanted(name ? `${name}/${e.name}` : e.name);
    return (this.only ? entries.filter((e) => !unwanted(e)) : entries).map((e) => e.name).sort();
  }

  /**
   * A slice of a directory's entries, in order, the next AHEAD files opened ahead. The window
   * stops at a subdirectory (what is below it comes first), so no more than AHEAD are ever out.
   */
  private async *entries(inside: string, name: string, slice: string[], stats: (Stats | null)[]): AsyncGenerator<Buffer> {
    const ahead = new Map<number, Promise<Opened | null>>();
    let next = 0;
    const openAhead = (from: number) => {
      for (next = Math.max(next, from); next < slice.length && ahead.size < AHEAD; next++) {
        const st = stats[next];
        if (st?.isDirectory()) break;
        if (!st?.isFile() || (st.nlink > 1 && this.linked.has(`${st.dev}:${st.ino}`))) continue;
        if (!this.wanted(name ? `${name}/${slice[next]}` : (slice[next] as string))) continue;
        const opening = this.open(path.join(inside, slice[next] as string), st);
        opening.catch(() => undefined); // awaited in its turn; a failure surfaces there
        ahead.set(next, opening);
      }
    };
    try {
      for (const [j, n] of slice.entries()) {
        openAhead(j);
        const child = stats[j];
        if (!child) continue;
        const childName = name ? `${name}/${n}` : n;
        const childAt = path.join(inside, n);
        if (child.isDirectory()) yield* this.dir(childAt, childName);
        else if (!this.wanted(childName)) continue;
        else if (child.isFile()) {
          const opening = ahead.get(j);
          ahead.delete(j);
          yield* this.file(childAt, childName, child, opening);
        } else if (child.isSymbolicLink()) await this.symlink(childAt, childName, child);
      }
    } finally {
      for (const opening of ahead.values()) await this.discard(opening); // left by a failure or a consumer that stopped
    }
  }

  /** The file at `at` opened and its head read, or null if it is gone or no longer the file listed. */
  private async open(at: string, listed: Stats): Promise<Opened | null> {
    const handle = await open(at, OPEN_FILE).catch(gone);
    if (!handle) return null;
    const head = take(HEAD_BYTES);
    try {
      const st = await handle.stat();
      if (!st.isFile() || st.ino !== listed.ino || st.dev !== listed.dev) {
        // Replaced since it was listed: left out.
        await this.release({ handle, head });
        return null;
      }
      const { bytesRead } = await handle.read(head, 0, Math.min(listed.size, HEAD_BYTES), null);
      return { handle, st, head, headBytes: bytesRead };
    } catch (err) {
      await this.release({ handle, head });
      throw err;
    }
  }

  /** Closes a file and keeps its head buffer for the next. */
  private async release(o: Pick<Opened, 'handle' | 'head'> | null): Promise<void> {
    if (!o) return;
    keep([o.head]);
    await o.handle.close();
  }

  /** A file opened ahead and not packed after all: closed, whether or not its opening failed. */
  private async discard(opening: Promise<Opened | null> | undefined): Promise<void> {
    await opening?.then(
      (o) => this.release(o),
      () => undefined,
    );
  }

  /** `opening`: the file opened ahead, if it was (a second link to an inode already packed is not). */
  private async *file(at: string, name: string, listed: Stats, opening?: Promise<Opened | null>): AsyncGenerator<Buffer> {
    const key = `${listed.dev}:${listed.ino}`;
    const first = listed.nlink > 1 ? this.linked.get(key) : undefined;
    if (first !== undefined) {
      await this.discard(opening);
      this.member({ type: 'Link', path: name, linkpath: first, mode: listed.mode, size: 0, mtimeMs: listed.mtimeMs });
      return;
    }
    const o = await (opening ?? this.open(at, listed));
    if (!o) return;
    try {
      const size = listed.size; // the header is written first: a file that grows is cut to it
      this.member({ type: 'File', path: name, mode: o.st.mode, size, mtimeMs: o.st.mtimeMs });
      this.gz.write(o.head.subarray(0, o.headBytes));
      yield* this.gz.members();
      for (let left = size - o.headBytes; left > 0;) {
        const room = this.gz.room();
        const want = Math.min(left, room.length);
        let { bytesRead } = await o.handle.read(room, 0, want, null);
        if (bytesRead === 0) {
          room.fill(0, 0, want); // it shrank: zeros for the rest, as GNU tar writes
          bytesRead = want;
        }
        this.gz.filled(bytesRead);
        left -= bytesRead;
        yield* this.gz.members();
      }
      this.gz.write(ZEROS.subarray(0, tarPadding(size)));
      if (listed.nlink > 1) this.linked.set(key, name);
    } finally {
      await this.release(o);
    }
    this.onEntry({ type: 'File', size: listed.size });
  }

  private async symlink(at: string, name: string, listed: Stats): Promise<void> {
    const target = await readlink(at).catch(gone);
    if (target === null) return;
    this.member({ type: 'SymbolicLink', path: name, linkpath: target, mode: listed.mode, size: 0, mtimeMs: listed.mtimeMs });
  }

  private member(m: TarMember): void {
    // Permissions as node-tar's portable mode wrote them: the owner can always read and write,
    // nobody else can write; a directory is searchable wherever it is readable.
    let mode = ((m.mode & 0o7777) | 0o600) & ~0o022;
    if (m.type === 'Directory') mode |= (mode & 0o444) >> 2;
    this.gz.write(tarHeader({ ...m, mode }));
    if (m.type !== 'File') this.onEntry({ type: m.type, size: 0 });
  }
}

/**
 * The bytes of the regular files under `paths` (links not followed; a path that is a file counts
 * itself, one that is missing nothing): a pack's known total, for progress.
 */
export async function bytesUnder(paths: string[]): Promise<number> {
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    await inSlices(entries, async (e) => {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) return walk(p);
      if (!e.isFile()) return;
      const { size } = await lstat(p); // read before adding: `total += await …` would add to a stale total
      total += size;
    });
  };
  await Promise.all(
    paths.map(async (p) => {
      const st = await lstat(p).catch(() => null);
      if (st?.isDirectory()) return walk(p);
      if (st?.isFile()) total += st.size;
    }),
  );
  return total;
}
