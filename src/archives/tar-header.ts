/**
 * The header blocks of one tar member (POSIX ustar, with a pax extended header before it when a
 * field does not fit), as `tar-reader.ts` and GNU tar read them. Portable, as node-tar's
 * `portable` option wrote them before: no owner (uid and gid 0, no names), no device numbers,
 * no access or change times; what a restore or `tar -xzf` on another machine needs is the
 * name, type, mode, size and modification time.
 */

import { BLOCK, headerChecksum, tarPadding } from './tar-format.js';

export interface TarMember {
  type: 'File' | 'Directory' | 'SymbolicLink' | 'Link';
  /** The member's name in the archive (a directory's ends in `/`). */
  path: string;
  /** Permission bits (the low 12 bits are kept). */
  mode: number;
  /** Bytes of data that follow (files only). */
  size: number;
  /** Modification time, in milliseconds since the epoch (stored in whole seconds). */
  mtimeMs: number;
  /** A link's target (a hard link's is another member's name). */
  linkpath?: string;
}

const FLAGS: Record<TarMember['type'], string> = { File: '0', Link: '1', SymbolicLink: '2', Directory: '5' };
/** The largest size an 11-digit octal field holds (8 GiB - 1). */
const OCTAL_SIZE_MAX = 0o77777777777;
/** ASCII without NUL: what the ustar fields hold as they are (the rest goes in pax, as UTF-8). */
const ASCII = /^[\x01-\x7f]*$/;

/** One block of header, preceded by a pax header (and its records) when the member needs one. */
export function tarHeader(m: TarMember): Buffer {
  const pax: [string, string][] = [];
  const name = splitName(m.path);
  if (!name) pax.push(['path', m.path]);
  const linkpath = m.linkpath ?? '';
  const linkFits = linkpath.length <= 100 && ASCII.test(linkpath);
  if (!linkFits) pax.push(['linkpath', linkpath]);
  if (m.size > OCTAL_SIZE_MAX) pax.push(['size', String(m.size)]);
  const h = ustarBlock({
    // Without pax, what a reader that does not know it shows.
    ...(name ?? { name: truncated(m.path, 100), prefix: '' }),
    mode: m.mode & 0o7777,
    size: m.size,
    mtime: Math.max(0, Math.floor(m.mtimeMs / 1000)),
    flag: FLAGS[m.type],
    linkpath: linkFits ? linkpath : '',
  });
  return pax.length === 0 ? h : Buffer.concat([paxHeader(m.path, pax), h]);
}

/** Two zero blocks: the end of the archive. */
export const TAR_END = Buffer.alloc(2 * BLOCK);

/**
 * A name as ustar's 100-byte name and 155-byte prefix, split at a slash; null when it does not
 * fit or is not ASCII (pax carries it in UTF-8, as GNU tar's pax format does).
 */
function splitName(p: string): { name: string; prefix: string } | null {
  if (!ASCII.test(p)) return null;
  if (p.length <= 100) return { name: p, prefix: '' };
  // The prefix takes what it can up to a slash, the name the rest (a directory keeps its slash).
  const cut = p.lastIndexOf('/', Math.min(155, p.length - 2));
  if (cut <= 0 || p.length - cut - 1 > 100) return null;
  return { name: p.slice(cut + 1), prefix: p.slice(0, cut) };
}

/** The start of `s` in at most `bytes` bytes of UTF-8, never cutting a character. */
function truncated(s: string, bytes: number): string {
  let out = '';
  for (const ch of s) {
    if (Buffer.byteLength(out + ch) > bytes) break;
    out += ch;
  }
  return out;
}

/** A pax extended header (typeflag `x`) with its records, padded to whole blocks. */
function paxHeader(path: string, records: [string, string][]): Buffer {
  const body = Buffer.from(records.map(([k, v]) => paxRecord(k, v)).join(''), 'utf8');
  const h = ustarBlock({
    // The name GNU tar gives it (it is not extracted): a directory and the member's base name.
    name: truncated(`PaxHeader/${path.replace(/\/$/, '').split('/').pop() ?? ''}`, 100),
    prefix: '',
    mode: 0o644,
    size: body.length,
    mtime: 0,
    flag: 'x',
    linkpath: '',
  });
  return Buffer.concat([h, body, Buffer.alloc(tarPadding(body.length))]);
}

/** One ustar header block, its checksum set; no owner and no device numbers (portable). */
function ustarBlock(f: {
  name: string;
  prefix: string;
  mode: number;
  size: number;
  mtime: number;
  flag: string;
  linkpath: string;
}): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(f.name, 0, 100, 'utf8');
  octal(h, 100, 8, f.mode);
  octal(h, 108, 8, 0); // uid
  octal(h, 116, 8, 0); // gid
  if (f.size > OCTAL_SIZE_MAX) base256(h, 124, 12, f.size);
  else octal(h, 124, 12, f.size);
  octal(h, 136, 12, f.mtime);
  h.write(f.flag, 156, 'latin1');
  h.write(f.linkpath, 157, 100, 'utf8');
  h.write('ustar\u000000', 257, 'latin1');
  h.write(f.prefix, 345, 155, 'utf8');
  h.fill(0x20, 148, 156);
  h.write(`${headerChecksum(h).toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

/** `"<length> <key>=<value>\n"`, the length in decimal counting its own digits (POSIX.1-2001). */
function paxRecord(key: string, value: string): string {
  const rest = Buffer.byteLength(` ${key}=${value}\n`);
  let length = rest + 1;
  while (String(length).length + rest !== length) length = String(length).length + rest;
  return `${length} ${key}=${value}\n`;
}

/** Digits filling the field but its last byte, a NUL. */
function octal(h: Buffer, at: number, length: number, n: number): void {
  h.write(`${n.toString(8).padStart(length - 1, '0')}\0`, at, length, 'latin1');
}

/** GNU's base-256 number (high bit of the first byte set), for sizes an octal field cannot hold. */
function base256(h: Buffer, at: number, length: number, n: number): void {
  h[at] = 0x80;
  for (let i = at + length - 1, rest = n; i > at; i--, rest = Math.floor(rest / 256)) h[i] = rest % 256;
}
