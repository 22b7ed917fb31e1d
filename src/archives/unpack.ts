import { createReadStream } from 'node:fs';
import { mkdir, readdir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import yauzl from 'yauzl';
import { messageOf } from '../lib/errors.js';
import { removeTree } from '../lib/remove-tree.js';
import { fileWriter, WriteFailed, type FileWriter } from './file-writer.js';
import { tarReader, TarInvalid } from './tar-reader.js';

export type ArchiveFormat = 'tar.gz' | 'zip';

/** Why an archive is refused; `entry` names the offending member. */
export class ArchiveRefused extends Error {
  constructor(
    readonly code:
      | 'path_escapes'
      | 'absolute_path'
      | 'link_escapes'
      | 'device_file'
      | 'unsupported_entry'
      | 'invalid_archive'
      | 'compression_ratio',
    readonly entry: string | null,
    detail: string,
  ) {
    super(detail);
  }

  /** What was refused, naming the member: a problem's detail. */
  get detail(): string {
    return this.entry === null ? this.message : `${JSON.stringify(this.entry)}: ${this.message}`;
  }
}

/** The archive's files need more than the budget (the account's remaining disk). */
export class ArchiveTooLarge extends Error {
  constructor(readonly bytes: number) {
    super('The unpacked archive exceeds the remaining disk quota.');
  }
}

/** What an unpacking may cost: the files' bytes, and how far the archive may inflate. */
export interface UnpackLimits {
  bytes: number;
  /** Most inflated bytes per compressed byte, checked once RATIO_CHECKED_FROM bytes came out. */
  ratio: number;
  /** Told each regular file unpacked (its member name and size): what the caller need not list again. */
  onFile?: (member: string, bytes: number) => void;
}

/**
 * Web content compresses 3–20:1; an upload that inflates past 200:1 is a decompression bomb,
 * refused before it costs minutes of CPU. (A backup, Berth's own checksummed archive, has no ratio.)
 */
export const UPLOAD_MAX_RATIO = 200;
const RATIO_CHECKED_FROM = 8 * 1024 * 1024;

function checkRatio(inflated: number, compressed: number, maxRatio: number, member: string | null): void {
  if (inflated > RATIO_CHECKED_FROM && inflated > maxRatio * compressed) {
    throw new ArchiveRefused('compression_ratio', member, `inflates more than ${maxRatio}:1 (a decompression bomb)`);
  }
}

export interface Unpacked {
  files: number;
  bytes: number;
}

/** A member path, relative and inside the release; `null` for the root itself. */
function memberPath(raw: string): string | null {
  if (raw.includes('\0')) throw new ArchiveRefused('invalid_archive', raw, 'names may not contain a NUL byte');
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[a-zA-Z]:/.test(raw)) {
    throw new ArchiveRefused('absolute_path', raw, 'absolute paths are not allowed');
  }
  const normalized = path.posix.normalize(raw.replace(/\\/g, '/'));
  if (normalized === '..' || normalized.startsWith('../')) {
    throw new ArchiveRefused('path_escapes', raw, 'the path leads outside the release');
  }
  return normalized === '.' || normalized === './' ? null : normalized.replace(/\/$/, '');
}

/** A link target must stay inside the release, seen from the link's own directory. */
function checkLinkTarget(member: string, target: string, relativeTo: 'link' | 'root'): void {
  if (target.includes('\0')) throw new ArchiveRefused('invalid_archive', member, 'link targets may not contain a NUL byte');
  if (target.startsWith('/') || /^[a-zA-Z]:/.test(target))
    throw new ArchiveRefused('link_escapes', member, 'links must be relative');
  const base = relativeTo === 'link' ? path.posix.dirname(member) : '.';
  const resolved = path.posix.normalize(path.posix.join(base, target));
  if (resolved === '..' || resolved.startsWith('../')) {
    throw new ArchiveRefused('link_escapes', member, `the link points outside the release (${target})`);
  }
}

/**
 * Unpacks an archive into `dest` (created here), refusing escaping paths, absolute paths, links
 * leading outside and device files, and stopping at `limits` (bytes of files, inflation ratio).
 * On any refusal `dest` is removed: nothing is left behind. A tar.gz is read as it streams in; a zip (which needs random
 * access) from the file it was received into. Never buffers a large file.
 */
export async function unpackArchive(
  source: { stream: Readable } | { file: string },
  format: ArchiveFormat,
  dest: string,
  limits: UnpackLimits,
): Promise<Unpacked> {
  await mkdir(dest, { recursive: true });
  try {
    const { files, bytes, links } =
      format === 'zip' && 'file' in source
        ? await unpackZip(source.file, dest, limits)
        : await unpackTar('stream' in source ? source.stream : createReadStream(source.file), dest, limits);
    // Only an archive's own links can be in `dest`, which was made empty here.
    if (links > 0) await checkLinksInside(dest, dest);
    return { files, bytes };
  } catch (err) {
    await removeTree(dest);
    throw err;
  }
}

/**
 * tar.gz: gunzipped by zlib (in the libuv pool, beside the event loop), read by tar-reader.ts,
 * and written by a worker thread (file-writer.ts). Our own writer rather than node-tar's
 * extractor: every member is checked before it is written, and links are created only after
 * every file (hard links before symbolic ones), so nothing is ever written or linked through a
 * link.
 */
function unpackTar(input: Readable, dest: string, limits: UnpackLimits): Promise<Unpacked & { links: number }> {
  return new Promise((resolve, reject) => {
    const out = { files: 0, bytes: 0 };
    const links: { member: string; target: string; hard: boolean }[] = [];
    // 256 KiB output chunks rather than zlib's 16 KiB: a quarter of the callbacks on the event
    // loop, measured 10–15 % faster on 10,000 files.
    const gunzip = createGunzip({ chunkSize: 256 * 1024 });
    let settled = false;

    const stop = (err: unknown) => {
      if (settled) return;
      settled = true;
      input.destroy();
      gunzip.destroy();
      // The worker stops before the caller removes `dest`.
      void writer.destroy().then(() => reject(err as Error));
    };
    const writer = fileWriter(dest, { onError: (err) => stop(writeRefusal(err)) });

    let writing = false;
    const tar = tarReader({
      entry(entry) {
        writing = false;
        const member = memberPath(entry.path);
        switch (entry.type) {
          case 'Directory':
            if (member) writer.dir(member);
            return;
          case 'File':
          case 'OldFile':
          case 'ContiguousFile':
            if (!member) throw new ArchiveRefused('unsupported_entry', entry.path, 'a file without a name');
            out.files++;
            out.bytes += entry.size;
            if (out.bytes > limits.bytes) throw new ArchiveTooLarge(out.bytes);
            limits.onFile?.(member, entry.size);
            writer.open(member);
            writing = true;
            return;
          case 'SymbolicLink':
          case 'Link': {
            if (!member) throw new ArchiveRefused('unsupported_entry', entry.path, 'a link without a name');
            const hard = entry.type === 'Link';
            checkLinkTarget(member, entry.linkpath, hard ? 'root' : 'link');
            links.push({ member, target: hard ? path.posix.normalize(entry.linkpath) : entry.linkpath, hard });
            return;
          }
          case 'CharacterDevice':
          case 'BlockDevice':
          case 'FIFO':
            throw new ArchiveRefused('device_file', entry.path, 'device files and FIFOs are not allowed');
          default:
            throw new ArchiveRefused('unsupported_entry', entry.path, `entries of type ${entry.type} are not allowed`);
        }
      },
      data: (chunk) => writing && writer.write(chunk),
      end: () => writing && writer.close(),
    });

    const finish = () => {
      tar.end();
      // Hard links first: their targets are resolved while the release holds no symbolic link.
      for (const l of links.filter((l) => l.hard)) writer.link(l.member, l.target);
      for (const l of links.filter((l) => !l.hard)) writer.symlink(l.member, l.target);
      writer.finish().then(
        () => {
          settled = true;
          void writer.destroy();
          resolve({ ...out, links: links.length });
        },
        (err: unknown) => stop(err instanceof WriteFailed ? writeRefusal(err) : err),
      );
    };
    const unreadable = (err: Error) =>
      stop(new ArchiveRefused('invalid_archive', null, `not a readable tar.gz archive (${err.message})`));
    /** What the reader or a member's checks threw. */
    const refuse = (err: unknown) => (err instanceof TarInvalid ? unreadable(err) : stop(err));
    gunzip.on('error', unreadable);
    const flow = () => {
      if (!settled) gunzip.resume();
    };
    let compressed = 0;
    let inflated = 0;
    const take = (chunk: Buffer) => {
      inflated += chunk.length;
      checkRatio(inflated, compressed, limits.ratio, null);
      tar.write(chunk);
    };
    // zlib queues its next piece of work on the thread pool only after the 'data' handlers of the
    // last one have returned: reading and batching there would leave the inflating thread idle
    // meanwhile. Taken in a microtask, they overlap with the inflating of the next 256 KiB
    // (unpacking into tmpfs 6-9 % faster). 'end' comes by nextTick, before microtasks: it takes
    // what is left first.
    let inflatedChunks: Buffer[] = [];
    const takeInflated = () => {
      const chunks = inflatedChunks;
      inflatedChunks = [];
      try {
        for (const c of chunks) if (!settled) take(c);
      } catch (err) {
        refuse(err);
      }
      if (!settled && writer.busy) {
        gunzip.pause();
        // A failure stops the unpacking through onError.
        writer.drained().then(flow, () => undefined);
      }
    };
    gunzip.on('data', (chunk: Buffer) => {
      inflatedChunks.push(chunk);
      if (inflatedChunks.length === 1) queueMicrotask(takeInflated);
    });
    gunzip.on('end', () => {
      takeInflated();
      if (settled) return;
      try {
        finish();
      } catch (err) {
        refuse(err);
      }
    });
    input.on('error', (err) => stop(err));
    feedInLargePieces(input, gunzip, (chunk) => (compressed += chunk.length));
  });
}

/** Most bytes that wait for zlib, joined into its next piece, before the input is paused. */
const MAX_PIECE = 1024 * 1024;

/**
 * Pipes `input` into zlib in pieces of up to MAX_PIECE: every write is a trip through the thread
 * pool, and a socket or a file delivers 64 KiB at a time. What arrives while zlib works on one
 * piece goes into the next. (The benchmark's 100 MB inflated from a file in 560–610 ms in 64 KiB
 * pieces, 400–410 ms in 1 MiB ones.)
 */
function feedInLargePieces(input: Readable, zlib: Writable, onChunk: (chunk: Buffer) => void): void {
  let waiting: Buffer[] = [];
  let waitingBytes = 0;
  let writing = false;
  let ended = false;
  const next = () => {
    if (writing || zlib.destroyed) return;
    if (waitingBytes === 0) return void (ended && zlib.end());
    const piece = waiting.length === 1 ? (waiting[0] as Buffer) : Buffer.concat(waiting, waitingBytes);
    waiting = [];
    waitingBytes = 0;
    writing = true;
    input.resume();
    zlib.write(piece, () => {
      writing = false;
      next();
    });
  };
  input.on('data', (chunk: Buffer) => {
    onChunk(chunk);
    waiting.push(chunk);
    waitingBytes += chunk.length;
    if (waitingBytes >= MAX_PIECE) input.pause();
    next();
  });
  input.on('end', () => {
    ended = true;
    next();
  });
}

/**
 * What the archive itself makes impossible (a file where a directory must go, a hard link to
 * nothing, a name longer than the file system allows) is the client's 422; anything else (a
 * full disk) is the server's.
 */
function writeRefusal(err: WriteFailed): Error {
  const clientCodes = ['EEXIST', 'ENOTDIR', 'EISDIR', 'ENOENT', 'EPERM', 'ENAMETOOLONG'];
  return clientCodes.includes(err.code)
    ? new ArchiveRefused('invalid_archive', err.member, `could not be unpacked (${err.code})`)
    : err;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: true }, (err, zip) =>
      err ? reject(err) : resolve(zip),
    ),
  );
}

/**
 * Zip: names are validated here (not by yauzl, so every refusal carries our code); members are
 * written by the same worker as a tar's, links last, so nothing is ever written through a link.
 */
async function unpackZip(file: string, dest: string, limits: UnpackLimits): Promise<Unpacked & { links: number }> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch (err) {
    throw new ArchiveRefused('invalid_archive', null, `not a readable zip archive (${(err as Error).message})`);
  }
  const out = { files: 0, bytes: 0 };
  const links: { member: string; target: string }[] = [];
  const writer = fileWriter(dest);
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (err: Error) =>
        reject(new ArchiveRefused('invalid_archive', null, `not a readable zip archive (${err.message})`)),
      );
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        handleZipEntry(zip, entry, writer, limits, out, links).then(
          () => zip.readEntry(),
          (err: unknown) => reject(err as Error),
        );
      });
      zip.readEntry();
    });
    for (const l of links) writer.symlink(l.member, l.target);
    await writer.finish();
  } catch (err) {
    throw err instanceof WriteFailed ? writeRefusal(err) : err;
  } finally {
    zip.close();
    await writer.destroy();
  }
  return { ...out, links: links.length };
}

async function handleZipEntry(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  writer: FileWriter,
  limits: UnpackLimits,
  out: Unpacked,
  links: { member: string; target: string }[],
): Promise<void> {
  const raw = (entry.fileName as unknown as Buffer).toString('utf8');
  const member = memberPath(raw);
  const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
  const kind = mode & S_IFMT;
  if (raw.endsWith('/') || kind === S_IFDIR) {
    if (member) writer.dir(member);
    return;
  }
  if (!member) throw new ArchiveRefused('unsupported_entry', raw, 'an entry without a name');
  if (kind !== 0 && kind !== S_IFREG && kind !== S_IFLNK) {
    throw new ArchiveRefused('device_file', raw, 'device files, FIFOs and sockets are not allowed');
  }
  const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
    zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))),
  );
  if (kind === S_IFLNK) {
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    const target = Buffer.concat(chunks).toString('utf8');
    checkLinkTarget(member, target, 'link');
    links.push({ member, target });
    return;
  }
  checkRatio(entry.uncompressedSize, entry.compressedSize, limits.ratio, raw);
  out.files++;
  out.bytes += entry.uncompressedSize;
  if (out.bytes > limits.bytes) throw new ArchiveTooLarge(out.bytes);
  limits.onFile?.(member, entry.uncompressedSize);
  writer.open(member);
  try {
    for await (const c of stream) {
      writer.write(c as Buffer);
      if (writer.busy) await writer.drained();
    }
  } catch (err) {
    if (err instanceof WriteFailed) throw err;
    // yauzl checks sizes and CRC-less truncation while reading: the archive is damaged.
    throw new ArchiveRefused('invalid_archive', raw, `could not be read (${messageOf(err)})`);
  }
  writer.close();
}

/**
 * Links checked one by one can still escape together (`a -> ..` inside `x/`, then `x/b -> a/..`),
 * so every link in the unpacked release is resolved for real and must land inside it.
 */
export async function checkLinksInside(dir: string, root: string): Promise<void> {
  const realRoot = await realpath(root);
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) await checkLinksInside(full, root);
    if (!e.isSymbolicLink()) continue;
    const target = await realpath(full).catch(async () =>
      // Dangling: resolve the target against the link's real directory.
      path.resolve(await realpath(path.dirname(full)), await readlink(full)),
    );
    if (target !== realRoot && !target.startsWith(realRoot + path.sep)) {
      throw new ArchiveRefused('link_escapes', path.relative(root, full), 'the link points outside the release');
    }
  }
}
