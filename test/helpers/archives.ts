import { gzipSync } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import yazl from 'yazl';

/** Archives built byte by byte, so tests can make the malicious ones no archiver would. */
export interface TarEntry {
  path: string;
  /**
   * ustar typeflag: '0' file, '1' hard link, '2' symlink, '3' char device, '5' directory, '6' FIFO;
   * 'x' and 'g' pax headers, 'L' and 'K' GNU long names (content: the records or the name).
   */
  type?: '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | 'x' | 'g' | 'L' | 'K' | 'S';
  content?: string | Buffer;
  linkpath?: string;
  mode?: number;
}

function header(e: TarEntry, size: number): Buffer {
  const h = Buffer.alloc(512, 0);
  const put = (value: string, offset: number, length: number) => h.write(value.slice(0, length), offset, length, 'utf8');
  const octal = (n: number, length: number) => n.toString(8).padStart(length - 1, '0');
  put(e.path, 0, 100);
  put(`${octal(e.mode ?? (e.type === '5' ? 0o755 : 0o644), 8)}\0`, 100, 8);
  put('0000000\0', 108, 8);
  put('0000000\0', 116, 8);
  put(`${octal(size, 12)}\0`, 124, 12);
  put(`${octal(1_700_000_000, 12)}\0`, 136, 12);
  put(e.type ?? '0', 156, 1);
  put(e.linkpath ?? '', 157, 100);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  return sealHeader(h);
}

/** Sets a header's checksum over its bytes as they are (as signed chars if asked, as old tars did). */
export function sealHeader(h: Buffer, signed = false): Buffer {
  h.write('        ', 148, 'latin1');
  let sum = 0;
  for (const b of h) sum += signed && b > 127 ? b - 256 : b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

/** A tar archive, ending with its two zero blocks. */
export function tar(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.content ?? '');
    parts.push(header(e, body.length), body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

export const tarGz = (entries: TarEntry[]): Buffer => gzipSync(tar(entries));

/** A pax record, `"<length> <key>=<value>\n"`, its length counting itself. */
export function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  const bytes = Buffer.byteLength(rest);
  let length = bytes;
  while (String(length).length + bytes !== length) length = String(length).length + bytes;
  return `${length}${rest}`;
}

export interface ZipEntry {
  path: string;
  content?: string | Buffer;
  /** Unix mode with type bits, e.g. 0o120777 for a symlink (content = target). */
  mode?: number;
}

/** A zip; `rename` rewrites member names afterwards (yazl refuses `..`, the attacks need it). */
export async function zip(entries: ZipEntry[], rename: [string, string][] = []): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const e of entries) z.addBuffer(Buffer.from(e.content ?? ''), e.path, { mode: e.mode ?? 0o100644 });
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  let out = Buffer.concat(chunks);
  for (const [from, to] of rename) {
    if (from.length !== to.length) throw new Error('renames must keep the length');
    out = Buffer.from(out.toString('latin1').split(from).join(to), 'latin1');
  }
  return out;
}

/** Every member of a tar.gz, with its bytes. */
export async function members(archive: Buffer): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const parser = new Parser({
    onReadEntry: (entry: ReadEntry) => {
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      entry.on('end', () => out.set(entry.path, Buffer.concat(chunks)));
    },
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
    parser.end(archive);
  });
  return out;
}
