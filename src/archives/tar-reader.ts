/**
 * A tar reader (POSIX ustar and pax, GNU long names) that takes the archive in chunks of any size
 * and calls back synchronously: a header, its data as subarrays of the chunks (never copied),
 * its end. node-tar's Parser makes a stream object and a round of events per member, which was
 * most of the main thread's time on an archive of 10,000 small files; the unpacking needs none
 * of that.
 *
 * As GNU tar does, the archive ends at its first zero block; what follows is not read. A pax
 * header's path, linkpath and size apply to the next member; a global pax header's would apply to
 * every member alike, so it is read and checked but not applied. Anything it cannot read for
 * certain (a checksum that does not add up, a size that is not a number, a member cut short)
 * throws TarInvalid, and entries of a type it does not know are reported as they are (`type`
 * names them) for the caller to refuse.
 */

import { BLOCK, CHECKSUM_FIELD_AS_SPACES, headerChecksum, tarPadding } from './tar-format.js';

export class TarInvalid extends Error {}

/** Names of the type flags, as node-tar and the tar documentation call them. */
const TYPES: Record<string, string> = {
  '0': 'File',
  '\0': 'OldFile',
  '1': 'Link',
  '2': 'SymbolicLink',
  '3': 'CharacterDevice',
  '4': 'BlockDevice',
  '5': 'Directory',
  '6': 'FIFO',
  '7': 'ContiguousFile',
  A: 'SolarisACL',
  D: 'GNUDumpDir',
  I: 'Inode',
  M: 'ContinuationFile',
  S: 'SparseFile',
  V: 'TapeVolumeHeader',
};
/** Entries that describe the next one: pax headers (local, global) and GNU long names. */
const META = new Set(['x', 'X', 'g', 'L', 'N', 'K']);
/** Longest meta entry read (node-tar's limit too): a path of a megabyte is not a site's. */
const MAX_META_BYTES = 1024 * 1024;

export interface TarEntry {
  type: string;
  path: string;
  linkpath: string;
  size: number;
}

export interface TarHandlers {
  entry(entry: TarEntry): void;
  /** A piece of the current entry's data: a subarray of the chunk given to `write`, not a copy. */
  data(chunk: Buffer): void;
  /** The current entry's data is complete (called for every entry, with or without data). */
  end(): void;
}

interface Overrides {
  path?: string;
  linkpath?: string;
  size?: number;
}

export function tarReader(on: TarHandlers) {
  const header = Buffer.alloc(BLOCK);
  let headerFill = 0;
  /** Bytes of the current entry's data still to come, then of its padding to the next block. */
  let remain = 0;
  let padding = 0;
  let meta: { type: string; chunks: Buffer[] } | null = null;
  let local: Overrides = {};
  let entries = 0;
  let offset = 0; // bytes read so far, for messages
  let ended = false;

  const finishEntry = () => {
    if (meta) {
      applyMeta(meta.type, Buffer.concat(meta.chunks));
      meta = null;
    } else on.end();
  };

  const applyMeta = (type: string, body: Buffer) => {
    if (type === 'L' || type === 'N') local.path = cString(body, 0, body.length);
    else if (type === 'K') local.linkpath = cString(body, 0, body.length);
    else {
      const values = paxRecords(body);
      // A global header's path, linkpath or size would be every member's: read, checked, not applied.
      if (type !== 'g') local = { ...local, ...values };
    }
  };

  const readHeader = () => {
    const at = offset;
    offset += BLOCK;
    const sum = headerChecksum(header);
    if (sum === CHECKSUM_FIELD_AS_SPACES && header.readBigUInt64LE(148) === 0n) return void (ended = true); // a zero block ends the archive
    const stored = octal(header, 148, 8);
    if (stored !== sum && stored !== signedChecksum(header)) {
      throw new TarInvalid(
        entries === 0 ? 'not a tar archive' : `the header at byte ${at} is damaged (its checksum does not add up)`,
      );
    }
    entries++;
    const flag = String.fromCharCode(header[156] as number);
    const size = number(header, 124, 12);
    if (size === null) throw new TarInvalid(`the header at byte ${at} has no valid size`);
    if (META.has(flag)) {
      if (size > MAX_META_BYTES) throw new TarInvalid(`a ${flag} header of ${size} bytes is longer than allowed`);
      meta = { type: flag, chunks: [] };
      return begin(size);
    }
    let path = cString(header, 0, 100);
    const magic = header.toString('latin1', 257, 263);
    if (magic === 'ustar\0') {
      // POSIX ustar: a 155-byte prefix; star's variant keeps times in its last 25 (node-tar's reading).
      const prefix = cString(header, 345, header[475] !== 0 ? 155 : 130);
      if (prefix) path = `${prefix}/${path}`;
    }
    const o = local;
    local = {}; // a pax header or long name is the next member's only
    const name = o.path ?? path;
    let type = TYPES[flag] ?? `unknown type ${JSON.stringify(flag)}`;
    // Old tars marked a directory as a file whose name ends in a slash; a directory has no data.
    if ((type === 'File' || type === 'OldFile') && name.endsWith('/')) type = 'Directory';
    const entry: TarEntry = {
      type,
      path: name,
      linkpath: o.linkpath ?? cString(header, 157, 100),
      size: type === 'Directory' ? 0 : (o.size ?? size),
    };
    if (!entry.path) throw new TarInvalid(`the member at byte ${at} has no name`);
    const link = type === 'Link' || type === 'SymbolicLink';
    if (link && !entry.linkpath) throw new TarInvalid(`the link ${JSON.stringify(entry.path)} has no target`);
    if (!link && entry.linkpath) throw new TarInvalid(`${JSON.stringify(entry.path)} is not a link but has a target`);
    on.entry(entry);
    begin(entry.size);
  };

  const begin = (size: number) => {
    remain = size;
    padding = tarPadding(size);
    if (remain === 0) finishEntry();
  };

  return {
    /** Reads a chunk; throws TarInvalid for what cannot be read. */
    write(chunk: Buffer): void {
      let at = 0;
      while (at < chunk.length && !ended) {
        if (remain > 0) {
          const n = Math.min(remain, chunk.length - at);
          const piece = chunk.subarray(at, at + n);
          if (meta) meta.chunks.push(Buffer.from(piece));
          else on.data(piece);
          remain -= n;
          at += n;
          offset += n;
          if (remain === 0) finishEntry();
        } else if (padding > 0) {
          const n = Math.min(padding, chunk.length - at);
          padding -= n;
          at += n;
          offset += n;
        } else {
          const n = Math.min(BLOCK - headerFill, chunk.length - at);
          chunk.copy(header, headerFill, at, at + n);
          headerFill += n;
          at += n;
          if (headerFill === BLOCK) {
            headerFill = 0;
            readHeader();
          }
        }
      }
    },
    /** The archive is complete: throws if it stopped inside a header or a member. */
    end(): void {
      if (remain > 0 || headerFill > 0 || padding > 0) throw new TarInvalid('the archive is cut short');
      if (entries === 0) throw new TarInvalid('not a tar archive (no member)');
    },
  };
}

/** Old tars added the bytes as signed chars; GNU tar accepts either sum. */
function signedChecksum(h: Buffer): number {
  let sum = CHECKSUM_FIELD_AS_SPACES;
  for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += ((h[i] as number) << 24) >> 24;
  return sum;
}

/** A NUL-terminated UTF-8 field. */
function cString(buf: Buffer, from: number, length: number): string {
  const end = buf.indexOf(0, from);
  return buf.toString('utf8', from, end === -1 || end > from + length ? from + length : end);
}

/** An octal field (spaces and NULs around the digits allowed); NaN if it is not one, 0 if empty. */
function octal(buf: Buffer, from: number, length: number): number {
  let i = from;
  const end = from + length;
  while (i < end && buf[i] === 0x20) i++;
  let n = 0;
  for (; i < end; i++) {
    const digit = (buf[i] as number) - 0x30;
    if (digit < 0 || digit > 7) break;
    n = n * 8 + digit;
  }
  for (; i < end; i++) if (buf[i] !== 0 && buf[i] !== 0x20) return NaN;
  return n;
}

/** A numeric field: octal, or GNU's base-256 (high bit set) for sizes of 8 GiB and more. */
function number(buf: Buffer, from: number, length: number): number | null {
  const first = buf[from] as number;
  if (first & 0x80) {
    if (first !== 0x80) return null; // negative
    let n = 0;
    for (let i = from + 1; i < from + length; i++) n = n * 256 + (buf[i] as number);
    return Number.isSafeInteger(n) ? n : null;
  }
  const n = octal(buf, from, length);
  return Number.isNaN(n) ? null : n;
}

/** pax records, `"<length> <key>=<value>\n"` (POSIX.1-2001); only the keys that change where data goes. */
function paxRecords(body: Buffer): Overrides {
  const out: Overrides = {};
  let at = 0;
  while (at < body.length && body[at] !== 0) {
    const space = body.indexOf(0x20, at);
    const length = space === -1 ? NaN : Number(body.toString('latin1', at, space));
    if (!Number.isSafeInteger(length) || length <= space - at || at + length > body.length || body[at + length - 1] !== 0x0a) {
      throw new TarInvalid('a pax header is damaged');
    }
    const record = body.toString('utf8', space + 1, at + length - 1);
    const eq = record.indexOf('=');
    if (eq <= 0) throw new TarInvalid('a pax header is damaged');
    const key = record.slice(0, eq);
    const value = record.slice(eq + 1);
    if (key === 'path') out.path = value;
    else if (key === 'linkpath') out.linkpath = value;
    else if (key === 'size') {
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new TarInvalid('a pax size is not a number');
      out.size = Number(value);
    }
    at += length;
  }
  return out;
}
