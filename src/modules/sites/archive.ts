import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, readdir, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';

export type ArchiveFormat = 'tar.gz' | 'zip';

/** Why an archive is refused; `entry` names the offending member. */
export class ArchiveRefused extends Error {
  constructor(
    readonly code: 'path_escapes' | 'absolute_path' | 'link_escapes' | 'device_file' | 'unsupported_entry' | 'invalid_archive',
    readonly entry: string | null,
    detail: string,
  ) {
    super(detail);
  }
}

/** The archive's files need more than the budget (the account's remaining disk). */
export class ArchiveTooLarge extends Error {
  constructor(readonly bytes: number) {
    super('The unpacked archive exceeds the remaining disk quota.');
  }
}

export interface Unpacked {
  files: number;
  bytes: number;
}

/** A member path, relative and inside the release; `null` for the root itself. */
function memberPath(raw: string): string | null {
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
 * leading outside and device files, and stopping at `budget` bytes. On any refusal `dest` is
 * removed: nothing is left behind. A tar.gz is read as it streams in; a zip (which needs random
 * access) from the file it was received into. Never buffers a large file.
 */
export async function unpackArchive(
  source: { stream: Readable } | { file: string },
  format: ArchiveFormat,
  dest: string,
  budget: number,
): Promise<Unpacked> {
  await mkdir(dest, { recursive: true });
  try {
    const result =
      format === 'zip' && 'file' in source
        ? await unpackZip(source.file, dest, budget)
        : await unpackTar('stream' in source ? source.stream : createReadStream(source.file), dest, budget);
    await checkLinksInside(dest, dest);
    return result;
  } catch (err) {
    await rm(dest, { recursive: true, force: true });
    throw err;
  }
}

/** Files up to this size are collected and written in one call; larger ones are streamed. */
const SMALL_FILE = 1024 * 1024;
/** Writes in flight before the input is paused (bounds memory to about 64 small files). */
const MAX_IN_FLIGHT = 64;

/**
 * tar (gzip is detected by node-tar's parser, which also guards the decompression ratio). Our
 * own writer rather than node-tar's extractor: every member is checked before it is written,
 * many files are written at once, and links are created only after every file, so nothing is
 * ever written through one.
 */
function unpackTar(input: Readable, dest: string, budget: number): Promise<Unpacked> {
  return new Promise((resolve, reject) => {
    const out = { files: 0, bytes: 0 };
    const links: { member: string; target: string; hard: boolean }[] = [];
    const dirs = new Map<string, Promise<unknown>>();
    const writes = new Set<Promise<void>>();
    let parserBlocked = false;
    let settled = false;

    const stop = (err: unknown) => {
      if (settled) return;
      settled = true;
      input.destroy();
      // Writes already started finish before the caller removes `dest`.
      void Promise.allSettled([...writes]).then(() => reject(err as Error));
    };
    const ensureDir = (dir: string) => {
      let made = dirs.get(dir);
      if (!made) dirs.set(dir, (made = mkdir(dir, { recursive: true })));
      return made;
    };
    const flow = () => {
      if (!settled && !parserBlocked && writes.size < MAX_IN_FLIGHT) input.resume();
    };
    const track = (p: Promise<unknown>) => {
      const w = p.then(() => undefined);
      writes.add(w);
      if (writes.size >= MAX_IN_FLIGHT) input.pause();
      w.then(
        () => {
          writes.delete(w);
          flow();
        },
        (err: unknown) => stop(new ArchiveRefused('invalid_archive', null, `could not unpack (${(err as Error).message})`)),
      );
    };

    const writeFileEntry = (entry: ReadEntry, full: string) => {
      if ((entry.size ?? 0) > SMALL_FILE) {
        return track(ensureDir(path.dirname(full)).then(() => pipeline(entry, createWriteStream(full, { mode: 0o644 }))));
      }
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      track(
        new Promise((done) => entry.on('end', () => done(null))).then(async () => {
          await ensureDir(path.dirname(full));
          await writeFile(full, Buffer.concat(chunks), { mode: 0o644 });
        }),
      );
    };

    const onEntry = (entry: ReadEntry) => {
      if (settled) return void entry.resume();
      try {
        const member = memberPath(entry.path);
        switch (entry.type) {
          case 'Directory':
            entry.resume();
            return track(ensureDir(member ? path.join(dest, member) : dest));
          case 'File':
          case 'OldFile':
          case 'ContiguousFile':
            if (!member) throw new ArchiveRefused('unsupported_entry', entry.path, 'a file without a name');
            out.files++;
            out.bytes += entry.size ?? 0;
            if (out.bytes > budget) throw new ArchiveTooLarge(out.bytes);
            return writeFileEntry(entry, path.join(dest, member));
          case 'SymbolicLink':
          case 'Link': {
            if (!member) throw new ArchiveRefused('unsupported_entry', entry.path, 'a link without a name');
            const hard = entry.type === 'Link';
            checkLinkTarget(member, entry.linkpath ?? '', hard ? 'root' : 'link');
            links.push({ member, target: entry.linkpath ?? '', hard });
            return void entry.resume();
          }
          case 'CharacterDevice':
          case 'BlockDevice':
          case 'FIFO':
            throw new ArchiveRefused('device_file', entry.path, 'device files and FIFOs are not allowed');
          default:
            throw new ArchiveRefused('unsupported_entry', entry.path, `entries of type ${String(entry.type)} are not allowed`);
        }
      } catch (err) {
        entry.resume();
        stop(err);
      }
    };

    const parser = new Parser({ strict: true, noResume: true, onReadEntry: onEntry });
    parser.on('error', (err: Error) =>
      stop(new ArchiveRefused('invalid_archive', null, `not a readable tar.gz archive (${err.message})`)),
    );
    parser.on('drain', () => {
      parserBlocked = false;
      flow();
    });
    parser.on('end', () => {
      if (settled) return;
      void Promise.all([...writes])
        .then(async () => {
          for (const l of links) {
            const full = path.join(dest, l.member);
            await ensureDir(path.dirname(full));
            if (l.hard) await link(path.join(dest, path.posix.normalize(l.target)), full);
            else await symlink(l.target, full);
          }
        })
        .then(
          () => {
            settled = true;
            resolve(out);
          },
          (err: unknown) => stop(new ArchiveRefused('invalid_archive', null, `could not unpack (${(err as Error).message})`)),
        );
    });
    input.on('data', (chunk: Buffer) => {
      if (!parser.write(chunk)) {
        parserBlocked = true;
        input.pause();
      }
    });
    input.on('end', () => parser.end());
    input.on('error', (err) => stop(err));
  });
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
 * Zip: names are validated here (not by yauzl, so every refusal carries our code); files and
 * directories first, links only at the end, so nothing is ever written through a link.
 */
async function unpackZip(file: string, dest: string, budget: number): Promise<Unpacked> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch (err) {
    throw new ArchiveRefused('invalid_archive', null, `not a readable zip archive (${(err as Error).message})`);
  }
  const out = { files: 0, bytes: 0 };
  const links: { member: string; target: string }[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (err: Error) =>
        reject(new ArchiveRefused('invalid_archive', null, `not a readable zip archive (${err.message})`)),
      );
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        handleZipEntry(zip, entry, dest, budget, out, links).then(
          () => zip.readEntry(),
          (err: unknown) => reject(err as Error),
        );
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  for (const l of links) await symlink(l.target, path.join(dest, l.member));
  return out;
}

async function handleZipEntry(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  dest: string,
  budget: number,
  out: Unpacked,
  links: { member: string; target: string }[],
): Promise<void> {
  const raw = (entry.fileName as unknown as Buffer).toString('utf8');
  const member = memberPath(raw);
  const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
  const kind = mode & S_IFMT;
  if (raw.endsWith('/') || kind === S_IFDIR) {
    if (member) await mkdir(path.join(dest, member), { recursive: true });
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
  out.files++;
  out.bytes += entry.uncompressedSize;
  if (out.bytes > budget) throw new ArchiveTooLarge(out.bytes);
  const target = path.join(dest, member);
  await mkdir(path.dirname(target), { recursive: true });
  await pipeline(stream, createWriteStream(target, { flags: 'wx', mode: 0o644 }));
}

/**
 * Links checked one by one can still escape together (`a -> ..` inside `x/`, then `x/b -> a/..`),
 * so every link in the unpacked release is resolved for real and must land inside it.
 */
async function checkLinksInside(dir: string, root: string): Promise<void> {
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
