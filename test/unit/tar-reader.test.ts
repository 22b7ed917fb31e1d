import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tarReader, TarInvalid, type TarEntry } from '../../src/archives/tar-reader.js';
import { paxRecord, sealHeader, tar } from '../helpers/archives.js';

interface Read extends TarEntry {
  data: Buffer;
}

/** Everything the reader reports for `archive` given in chunks of `chunk` bytes. */
function read(archive: Buffer, chunk = archive.length): Read[] {
  const out: Read[] = [];
  let parts: Buffer[] = [];
  const r = tarReader({
    entry: (e) => void out.push({ ...e, data: Buffer.alloc(0) }),
    data: (c) => void parts.push(Buffer.from(c)),
    end() {
      (out.at(-1) as Read).data = Buffer.concat(parts);
      parts = [];
    },
  });
  for (let at = 0; at < archive.length; at += chunk) r.write(archive.subarray(at, at + chunk));
  r.end();
  return out;
}

/** Rewrites the header at `offset` with `edit` and sets its checksum (as `signed` chars if asked). */
function patchHeader(archive: Buffer, offset: number, edit: (h: Buffer) => void, signed = false): Buffer {
  const out = Buffer.from(archive);
  const h = out.subarray(offset, offset + 512);
  edit(h);
  sealHeader(h, signed);
  return out;
}

const root = mkdtempSync(path.join(tmpdir(), 'berth-tar-reader-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('tar reader: archives GNU tar writes', () => {
  const src = path.join(root, 'src');
  const deep = `${'long-directory-name-'.repeat(6)}/${'file-'.repeat(24)}.txt`; // 120 + 1 + 124 bytes
  const files = new Map<string, Buffer>([
    ['a.txt', Buffer.from('hello\n')],
    ['empty', Buffer.alloc(0)],
    ['blocks.bin', randomBytes(3 * 512)],
    ['odd.bin', randomBytes(70_001)],
    [deep, Buffer.from('deep')],
  ]);
  for (const [name, bytes] of files) {
    mkdirSync(path.dirname(path.join(src, name)), { recursive: true });
    writeFileSync(path.join(src, name), bytes);
  }
  const longTarget = `${'t'.repeat(150)}/x`;
  symlinkSync(longTarget, path.join(src, 'long-link'));
  symlinkSync('a.txt', path.join(src, 'short-link'));

  // ustar cannot store a 124-byte file name nor a 152-byte link target, v7 no path over 99 bytes.
  for (const format of ['gnu', 'pax', 'ustar', 'v7'] as const) {
    const members = format === 'gnu' || format === 'pax' ? ['.'] : ['a.txt', 'empty', 'blocks.bin', 'odd.bin', 'short-link'];
    const archive = execFileSync('tar', [`--format=${format}`, '-cf', '-', '-C', src, ...members], { maxBuffer: 1 << 26 });

    it.each([1, 7, 511, 512, 513, 65_536, archive.length])(`reads --format=${format} in chunks of %i bytes`, (chunk) => {
      const entries = read(archive, chunk);
      const byName = new Map(entries.map((e) => [e.path.replace(/^\.\//, ''), e]));
      for (const name of members.includes('.') ? [...files.keys()] : members.filter((m) => files.has(m))) {
        const e = byName.get(name);
        expect(e, name).toMatchObject({ type: format === 'v7' ? 'OldFile' : 'File', size: files.get(name)!.length });
        expect(e!.data.equals(files.get(name)!), name).toBe(true);
      }
      expect(byName.get('short-link')).toMatchObject({ type: 'SymbolicLink', linkpath: 'a.txt', size: 0 });
      if (members.includes('.')) {
        expect(byName.get('long-link')).toMatchObject({ type: 'SymbolicLink', linkpath: longTarget });
        expect(byName.get(path.dirname(deep) + '/')).toMatchObject({ type: 'Directory', size: 0 });
      }
    });
  }
});

describe('tar reader: what it makes of headers', () => {
  const names = (archive: Buffer) => read(archive).map(({ type, path, linkpath, size }) => ({ type, path, linkpath, size }));

  it('applies a pax path, linkpath and size to the next member only, and reads a global header without applying it', () => {
    const archive = tar([
      { path: 'g', type: 'g', content: paxRecord('path', 'everyone') + paxRecord('comment', 'made by hand') },
      { path: 'x', type: 'x', content: paxRecord('path', 'ü/a name longer than it looks.txt') + paxRecord('mtime', '1.5') },
      { path: 'short', content: 'data' },
      { path: 'x', type: 'x', content: paxRecord('linkpath', 'the/target') },
      { path: 'link', type: '2', linkpath: 'ignored' },
      { path: 'after', content: 'xy' },
    ]);
    expect(names(archive)).toEqual([
      { type: 'File', path: 'ü/a name longer than it looks.txt', linkpath: '', size: 4 },
      { type: 'SymbolicLink', path: 'link', linkpath: 'the/target', size: 0 },
      { type: 'File', path: 'after', linkpath: '', size: 2 },
    ]);
  });

  it('takes a pax size over the header field', () => {
    const archive = tar([
      { path: 'x', type: 'x', content: paxRecord('size', '6') },
      { path: 'f', content: 'sixsix' },
    ]);
    expect(read(patchHeader(archive, 1024, (h) => h.write('00000000000\0', 124, 'latin1')))[0]).toMatchObject({
      size: 6,
      data: Buffer.from('sixsix'),
    });
  });

  it('reads GNU long names and link targets', () => {
    const long = 'n'.repeat(300);
    const archive = tar([
      { path: '././@LongLink', type: 'L', content: `${long}\0` },
      { path: '././@LongLink', type: 'K', content: `${long}-target\0` },
      { path: 'cut', type: '1', linkpath: 'cut-target' },
    ]);
    expect(names(archive)).toEqual([{ type: 'Link', path: long, linkpath: `${long}-target`, size: 0 }]);
  });

  it("reads a ustar prefix, GNU's base-256 sizes, signed checksums and an old tar's directory", () => {
    let archive = tar([{ path: 'name.txt', content: 'z'.repeat(1000) }, { path: 'old-dir/' }]);
    archive = patchHeader(
      archive,
      0,
      (h) => {
        h.write('pre/fix', 345, 'latin1');
        h.fill(0, 124, 136);
        h[124] = 0x80;
        h.writeUInt16BE(1000, 134);
        h[265] = 0xe9; // a Latin-1 user name: signed and unsigned sums differ
      },
      true,
    );
    expect(names(archive)).toEqual([
      { type: 'File', path: 'pre/fix/name.txt', linkpath: '', size: 1000 },
      { type: 'Directory', path: 'old-dir/', linkpath: '', size: 0 },
    ]);
  });

  it('ends at the first zero block, as GNU tar does: what follows is not read', () => {
    const archive = Buffer.concat([tar([{ path: 'a', content: 'a' }]), Buffer.from('trailing garbage')]);
    expect(names(archive).map((e) => e.path)).toEqual(['a']);
  });

  it('reports types it does not write (devices, FIFOs, sparse files) by name', () => {
    const archive = tar([
      { path: 'dev', type: '3' },
      { path: 'fifo', type: '6' },
      { path: 'sparse', type: 'S' },
      { path: 'contiguous', type: '7', content: 'c' },
    ]);
    expect(names(archive).map((e) => e.type)).toEqual(['CharacterDevice', 'FIFO', 'SparseFile', 'ContiguousFile']);
  });
});

describe('tar reader: what it refuses', () => {
  const refused = (archive: Buffer, message: RegExp) => {
    expect(() => read(archive)).toThrow(TarInvalid);
    expect(() => read(archive)).toThrow(message);
  };
  const one = tar([{ path: 'f', content: 'x'.repeat(700) }]);

  it('what is not a tar archive, and an empty one', () => {
    refused(Buffer.from('this is not a tar archive at all'.repeat(40)), /not a tar archive/);
    refused(Buffer.alloc(0), /not a tar archive/);
    refused(Buffer.alloc(1024), /not a tar archive/);
  });

  it('a damaged header', () => {
    const two = tar([{ path: 'a' }, { path: 'b' }]);
    const damaged = Buffer.from(two);
    damaged[512 + 3] = 0x41;
    refused(damaged, /header at byte 512 is damaged/);
    refused(
      patchHeader(one, 0, (h) => h.write('12x', 124, 'latin1')),
      /no valid size/,
    );
    refused(
      patchHeader(one, 0, (h) => (h[124] = 0xff)),
      /no valid size/,
    );
  });

  it('an archive cut inside a member, its padding or a header', () => {
    for (const at of [100, 600, 1300]) refused(one.subarray(0, at), /cut short/);
    refused(Buffer.concat([one.subarray(0, 1536), one.subarray(0, 100)]), /cut short/);
  });

  it('links without a target, and targets on what is not a link', () => {
    refused(tar([{ path: 'l', type: '2' }]), /has no target/);
    refused(tar([{ path: 'f', linkpath: 'x' }]), /not a link but has a target/);
    refused(tar([{ path: '' }]), /has no name/);
  });

  it('damaged pax records and meta entries over a megabyte', () => {
    for (const records of ['12 path=a\n', '5 path=abc\n', 'x path=a\n', '8 =abc\n', paxRecord('size', '-1')]) {
      refused(tar([{ path: 'x', type: 'x', content: records }, { path: 'f' }]), /pax/);
    }
    refused(tar([{ path: 'L', type: 'L', content: Buffer.alloc(1024 * 1024 + 1, 0x61) }, { path: 'f' }]), /longer than allowed/);
  });
});

describe('tar reader: damaged archives', () => {
  it('a byte changed anywhere (its checksum mended or not) is read or refused as TarInvalid, never another error', () => {
    const archive = tar([
      { path: 'x', type: 'x', content: paxRecord('path', 'dir/with a pax name') + paxRecord('size', '5') },
      { path: 'f', content: 'hello' },
      { path: 'L', type: 'L', content: `${'n'.repeat(120)}\0` },
      { path: 'n', content: 'x'.repeat(600) },
      { path: 'l', type: '2', linkpath: 'f' },
    ]);
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const at = Math.floor(random() * archive.length);
      const value = Math.floor(random() * 256);
      const changed = Buffer.from(archive);
      changed[at] = value;
      // And with the block's checksum made to add up again, so that the fields themselves are read.
      const mended = patchHeader(archive, at - (at % 512), (h) => (h[at % 512] = value));
      for (const damaged of [changed, mended]) {
        try {
          read(damaged, 1 + Math.floor(random() * 700));
        } catch (err) {
          expect(err).toBeInstanceOf(TarInvalid);
        }
      }
    }
  });
});
