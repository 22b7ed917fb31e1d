import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readlink, realpath, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { x as extractTar, type ReadEntry } from 'tar';
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
 * Unpacks an uploaded archive into `dest` (created here), refusing escaping paths, absolute
 * paths, links leading outside and device files, and stopping at `budget` bytes. On any
 * refusal `dest` is removed: nothing is left behind. Streams from disk; never buffers a file.
 */
export async function unpackArchive(file: string, format: ArchiveFormat, dest: string, budget: number): Promise<Unpacked> {
  await mkdir(dest, { recursive: true });
  try {
    const result = format === 'zip' ? await unpackZip(file, dest, budget) : await unpackTarGz(file, dest, budget);
    await checkLinksInside(dest, dest);
    return result;
  } catch (err) {
    await rm(dest, { recursive: true, force: true });
    throw err;
  }
}

async function unpackTarGz(file: string, dest: string, budget: number): Promise<Unpacked> {
  // The filter cannot throw into node-tar: the first refusal is kept here and raised afterwards.
  const state: { refused: ArchiveRefused | ArchiveTooLarge | null } = { refused: null };
  const out = { files: 0, bytes: 0 };
  const filter = (raw: string, entry: unknown): boolean => {
    if (state.refused) return false;
    const e = entry as ReadEntry;
    try {
      const member = memberPath(raw);
      switch (e.type) {
        case 'Directory':
          return true;
        case 'File':
        case 'OldFile':
        case 'ContiguousFile':
          out.files++;
          out.bytes += e.size ?? 0;
          if (out.bytes > budget) throw new ArchiveTooLarge(out.bytes);
          return true;
        case 'SymbolicLink':
          checkLinkTarget(member ?? raw, e.linkpath ?? '', 'link');
          return true;
        case 'Link':
          checkLinkTarget(member ?? raw, e.linkpath ?? '', 'root');
          return true;
        case 'CharacterDevice':
        case 'BlockDevice':
        case 'FIFO':
          throw new ArchiveRefused('device_file', raw, 'device files and FIFOs are not allowed');
        default:
          throw new ArchiveRefused('unsupported_entry', raw, `entries of type ${String(e.type)} are not allowed`);
      }
    } catch (err) {
      state.refused = err as ArchiveRefused | ArchiveTooLarge;
      return false;
    }
  };
  try {
    // node-tar also refuses to write through symlinks and keeps paths inside cwd.
    await extractTar({ file, cwd: dest, filter, preserveOwner: false, strict: true });
  } catch (err) {
    if (state.refused) throw state.refused;
    throw new ArchiveRefused('invalid_archive', null, `not a readable tar.gz archive (${(err as Error).message})`);
  }
  if (state.refused) throw state.refused;
  return out;
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
