import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packArchive, type ArchivedDir } from '../../src/archives/pack.js';
import { tarHeader } from '../../src/archives/tar-header.js';
import { tarReader, type TarEntry } from '../../src/archives/tar-reader.js';
import { unpackArchive } from '../../src/archives/unpack.js';

const collect = async (chunks: AsyncIterable<Buffer>) => {
  const copies: Buffer[] = [];
  for await (const c of chunks) copies.push(Buffer.from(c)); // a chunk is valid until the next is asked for
  return Buffer.concat(copies);
};

/** The members of a tar.gz as Berth's reader sees them, with their data. */
function members(archive: Buffer): (TarEntry & { data: string })[] {
  const out: (TarEntry & { data: string })[] = [];
  let data: Buffer[] = [];
  const reader = tarReader({
    entry: (e) => void out.push({ ...e, data: '' }),
    data: (chunk) => void data.push(Buffer.from(chunk)),
    end: () => {
      (out.at(-1) as { data: string }).data = Buffer.concat(data).toString('latin1');
      data = [];
    },
  });
  reader.write(gunzipSync(archive));
  reader.end();
  return out;
}

const hasGnuTar = spawnSync('tar', ['--version']).status === 0;
const hasFifo = spawnSync('mkfifo', ['--version']).status === 0;

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'berth-pack-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const pack = (dirs: ArchivedDir[], onEntry: Parameters<typeof packArchive>[2] = () => undefined) =>
  collect(packArchive(root, dirs, onEntry));

describe('packing a backup', () => {
  it('stores each directory under its name, sorted, with files, links and modes', async () => {
    const staging = path.join(root, 'staging');
    const site = path.join(root, 'site');
    mkdirSync(path.join(staging, 'dns'), { recursive: true });
    mkdirSync(path.join(site, 'b'), { recursive: true });
    writeFileSync(path.join(staging, 'manifest.json'), '{}');
    writeFileSync(path.join(staging, 'dns', 'example.com.zone'), 'zone');
    writeFileSync(path.join(site, 'index.html'), '<h1>hi</h1>', { mode: 0o640 });
    writeFileSync(path.join(site, 'b', 'run.sh'), 'echo', { mode: 0o750 });
    symlinkSync('/etc/passwd', path.join(site, 'a-link'));
    linkSync(path.join(site, 'index.html'), path.join(site, 'z-hard'));
    const seen: string[] = [];
    const archive = await pack(
      [
        { dir: staging, as: '' },
        { dir: site, as: 'sites/s1' },
      ],
      (e) => seen.push(e.type),
    );
    expect(members(archive).map((m) => [m.type, m.path, m.linkpath, m.data])).toEqual([
      ['Directory', './', '', ''],
      ['Directory', 'dns/', '', ''],
      ['File', 'dns/example.com.zone', '', 'zone'],
      ['File', 'manifest.json', '', '{}'],
      ['Directory', 'sites/s1/', '', ''],
      ['SymbolicLink', 'sites/s1/a-link', '/etc/passwd', ''], // the link, never what it points to
      ['Directory', 'sites/s1/b/', '', ''],
      ['File', 'sites/s1/b/run.sh', '', 'echo'],
      ['File', 'sites/s1/index.html', '', '<h1>hi</h1>'],
      ['Link', 'sites/s1/z-hard', 'sites/s1/index.html', ''],
    ]);
    expect(seen.filter((t) => t === 'File')).toHaveLength(4);
    if (!hasGnuTar) return; // GNU tar absent: Berth's own reader has checked the archive
    const listing = execFileSync('tar', ['-tvzf', '-'], { input: archive, encoding: 'utf8' });
    expect(listing).toMatch(/^-rw-r-----.* sites\/s1\/index\.html$/m); // the mode kept, others never writing
    expect(listing).toMatch(/^-rwxr-x---.* sites\/s1\/b\/run\.sh$/m);
    expect(listing).toMatch(/^hrw-r-----.* sites\/s1\/z-hard link to sites\/s1\/index\.html$/m);
    const mtime = Math.floor(statSync(path.join(site, 'index.html')).mtimeMs / 1000);
    const out = path.join(root, 'out');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', '-', '-C', out], { input: archive });
    expect(readFileSync(path.join(out, 'sites/s1/z-hard'), 'utf8')).toBe('<h1>hi</h1>');
    expect(Math.floor(statSync(path.join(out, 'sites/s1/index.html')).mtimeMs / 1000)).toBe(mtime);
  });

  it('names too long or not ASCII go in pax headers that GNU tar and Berth read', async () => {
    const site = path.join(root, 'site');
    const deep = path.join(site, 'd'.repeat(120), 'e'.repeat(90)); // over 100 bytes: split with a prefix
    const deeper = path.join(deep, 'f'.repeat(150)); // over 255: pax
    mkdirSync(deeper, { recursive: true });
    writeFileSync(path.join(deep, 'x.txt'), 'prefix');
    writeFileSync(path.join(deeper, 'y.txt'), 'pax');
    writeFileSync(path.join(site, 'café.txt'), 'utf8');
    symlinkSync('t'.repeat(120), path.join(site, 'long-target'));
    const archive = await pack([{ dir: site, as: 's' }]);
    const byPath = new Map(members(archive).map((m) => [m.path, m]));
    expect(byPath.get(`s/${'d'.repeat(120)}/${'e'.repeat(90)}/x.txt`)?.data).toBe('prefix');
    expect(byPath.get(`s/${'d'.repeat(120)}/${'e'.repeat(90)}/${'f'.repeat(150)}/y.txt`)?.data).toBe('pax');
    expect(byPath.get('s/café.txt')?.data).toBe('utf8');
    expect(byPath.get('s/long-target')?.linkpath).toBe('t'.repeat(120));
    if (!hasGnuTar) return;
    const listing = execFileSync('tar', ['--quoting-style=literal', '-tzf', '-'], {
      input: archive,
      encoding: 'utf8',
    }).split('\n'); // names as they are, whatever the locale
    expect(listing).toEqual(expect.arrayContaining([...byPath.keys()]));
  });

  it('a backup-sized pack (several gzip members) unpacks with Berth and with GNU tar', async () => {
    const site = path.join(root, 'site');
    mkdirSync(path.join(site, 'a'), { recursive: true });
    const big = randomBytes(3 * 1024 * 1024 + 17);
    writeFileSync(path.join(site, 'a', 'big.bin'), big);
    writeFileSync(path.join(site, 'index.html'), '<h1>hi</h1>'.repeat(100_000));
    const file = path.join(root, 'out.tar.gz');
    writeFileSync(file, await pack([{ dir: site, as: 'site' }]));
    const dest = path.join(root, 'dest');
    await unpackArchive({ file }, 'tar.gz', dest, { bytes: Number.MAX_SAFE_INTEGER, ratio: Number.POSITIVE_INFINITY });
    expect(readFileSync(path.join(dest, 'site', 'a', 'big.bin')).equals(big)).toBe(true);
    if (!hasGnuTar) return;
    const out = path.join(root, 'gnu');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', file, '-C', out]);
    expect(readFileSync(path.join(out, 'site', 'a', 'big.bin')).equals(big)).toBe(true);
    expect(readFileSync(path.join(out, 'site', 'index.html'), 'utf8')).toBe('<h1>hi</h1>'.repeat(100_000));
  });

  it('reads files ahead of their turn: every byte in its place, hard links as links', async () => {
    const site = path.join(root, 'site');
    mkdirSync(path.join(site, 'f07d'), { recursive: true });
    const files = new Map<string, Buffer>();
    // Sizes around the head read ahead (128 KiB), more files than are opened ahead, a
    // subdirectory among them (f07d/, where the window stops) and a second link in a window.
    for (let i = 0; i < 30; i++) {
      const name = `${i === 15 ? 'f07d/' : ''}f${String(i).padStart(2, '0')}`;
      files.set(name, randomBytes([0, 1, 128 * 1024, 128 * 1024 + 1, 300 * 1024][i % 5] as number));
      writeFileSync(path.join(site, name), files.get(name) as Buffer);
    }
    linkSync(path.join(site, 'f03'), path.join(site, 'f03-link'));
    const m = members(await pack([{ dir: site, as: 's' }]));
    for (const [name, data] of files) expect(m.find((e) => e.path === `s/${name}`)?.data).toBe(data.toString('latin1'));
    expect(m.find((e) => e.path === 's/f03-link')).toMatchObject({ type: 'Link', linkpath: 's/f03' });
    const paths = m.map((e) => e.path);
    expect(paths.slice(paths.indexOf('s/f07'), paths.indexOf('s/f07') + 4)).toEqual(['s/f07', 's/f07d/', 's/f07d/f15', 's/f08']);
  });

  it.skipIf(!existsSync('/proc/self/fd'))('leaves no file open when its consumer stops early', async () => {
    const site = path.join(root, 'site');
    mkdirSync(site);
    for (let i = 0; i < 40; i++) writeFileSync(path.join(site, `f${i}`), randomBytes(400 * 1024));
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    const chunks = packArchive(root, [{ dir: site, as: 's' }], () => undefined)[Symbol.asyncIterator]();
    expect((await chunks.next()).done).toBe(false); // 8 MiB in flight: the first member, files still ahead
    await chunks.return?.(undefined);
    expect(open()).toBe(before);
  });

  it.skipIf(!hasFifo)('leaves out FIFOs, and a directory removed before it is read', async () => {
    const site = path.join(root, 'site');
    mkdirSync(site);
    execFileSync('mkfifo', [path.join(site, 'pipe')]);
    writeFileSync(path.join(site, 'index.html'), 'hi');
    const archive = await pack([
      { dir: site, as: 's' },
      { dir: path.join(root, 'removed'), as: 'gone' },
    ]);
    expect(members(archive).map((m) => m.path)).toEqual(['s/', 's/index.html']);
  });

  it('refuses a directory it was given that leads elsewhere through a link', async () => {
    const outside = mkdtempSync(path.join(tmpdir(), 'berth-outside-'));
    try {
      mkdirSync(path.join(outside, 'site'));
      writeFileSync(path.join(outside, 'site', 'secret'), 'not the account’s');
      symlinkSync(outside, path.join(root, 'sites'));
      await expect(pack([{ dir: path.join(root, 'sites', 'site'), as: 's' }])).rejects.toThrow(/leads elsewhere/);
      await expect(pack([{ dir: path.join(root, 'sites'), as: 's' }])).rejects.toThrow(); // the link itself
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

/**
 * What a tenant's code can do while the backup runs, done at a known moment: when the packer
 * writes the header of directory `a/`, it has already listed (and `lstat`ed) a/'s siblings, and
 * opened none of them (the files read ahead stop at a directory).
 */
describe('packing a tree that changes while it is read', () => {
  const during = async (prepare: (site: string) => void, change: (site: string) => void) => {
    const site = path.join(root, 'site');
    mkdirSync(path.join(site, 'a'), { recursive: true });
    prepare(site);
    let dirs = 0;
    const archive = await pack([{ dir: site, as: 's' }], (e) => {
      if (e.type === 'Directory' && ++dirs === 2) change(site); // s/, then s/a/
    });
    return members(archive);
  };

  it('pads a file that shrank with zeros to the size it was listed with', async () => {
    const m = await during(
      (site) => writeFileSync(path.join(site, 'b.txt'), 'x'.repeat(2000)),
      (site) => truncateSync(path.join(site, 'b.txt'), 10),
    );
    const b = m.find((e) => e.path === 's/b.txt');
    expect(b?.size).toBe(2000);
    expect(b?.data).toBe('x'.repeat(10) + '\0'.repeat(1990));
  });

  it('leaves out a file replaced (by a link, a FIFO or another file) after it was listed', async () => {
    const m = await during(
      (site) => {
        for (const n of ['b-link', 'c-fifo', 'd-other']) writeFileSync(path.join(site, n), 'listed');
      },
      (site) => {
        rmSync(path.join(site, 'b-link'));
        symlinkSync('/etc/passwd', path.join(site, 'b-link'));
        rmSync(path.join(site, 'c-fifo'));
        if (hasFifo) execFileSync('mkfifo', [path.join(site, 'c-fifo')]);
        writeFileSync(path.join(site, 'd-new'), 'swapped in');
        renameSync(path.join(site, 'd-new'), path.join(site, 'd-other'));
      },
    );
    expect(m.map((e) => e.path)).toEqual(['s/', 's/a/']);
  });

  it('does not follow a directory replaced by a link after it was listed', async () => {
    const outside = mkdtempSync(path.join(tmpdir(), 'berth-outside-'));
    writeFileSync(path.join(outside, 'secret'), 'not the account’s');
    try {
      const m = await during(
        (site) => mkdirSync(path.join(site, 'b')),
        (site) => {
          renameSync(path.join(site, 'b'), path.join(site, 'b-moved'));
          symlinkSync(outside, path.join(site, 'b'));
        },
      );
      expect(m.map((e) => e.path)).toEqual(['s/', 's/a/']);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('tar headers', () => {
  it('a size over 8 GiB goes in a pax record and a base-256 field', () => {
    const size = 2 ** 33 + 5;
    const header = tarHeader({ type: 'File', path: 'huge.bin', mode: 0o644, size, mtimeMs: 0 });
    expect(header.length).toBe(3 * 512); // pax header, its records, the member's header
    expect(header.subarray(1024 + 124, 1024 + 136)).toEqual(Buffer.from([0x80, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 5]));
    const seen: TarEntry[] = [];
    tarReader({ entry: (e) => void seen.push(e), data: () => undefined, end: () => undefined }).write(header);
    expect(seen).toEqual([{ type: 'File', path: 'huge.bin', linkpath: '', size }]);
  });
});
