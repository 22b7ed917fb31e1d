import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { packArchive } from '../../src/archives/pack.js';
import { parallelGzip } from '../../src/archives/parallel-gzip.js';
import { storedMember, storedRuns } from '../../src/archives/stored-gzip.js';
import { unpackArchive } from '../../src/archives/unpack.js';

const collect = async (stream: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
};

describe('parallel gzip', () => {
  it('writes the blocks in order as gzip members that gunzip reads back whole', async () => {
    const input = Buffer.concat([randomBytes(5000), Buffer.alloc(7000, 'a'), randomBytes(1234)]);
    const chunks = Array.from({ length: Math.ceil(input.length / 700) }, (_, i) => input.subarray(i * 700, (i + 1) * 700));
    const out = await collect(Readable.from(chunks).pipe(parallelGzip({ blockBytes: 1024, parallel: 3 })));
    expect(out.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    // More than one member: the second gzip header follows the first member.
    expect(out.indexOf(Buffer.from([0x1f, 0x8b, 0x08]), 10)).toBeGreaterThan(0);
    expect(gunzipSync(out).equals(input)).toBe(true);
  });

  it('stores what looks random as a member of its own and compresses the rest, in order', async () => {
    const segment = 16 * 1024; // the runs' unit (stored-gzip.ts)
    const text = Buffer.alloc(6 * segment, '<p>Berth backs up what the account holds.</p>\n');
    const random = randomBytes(12 * segment);
    const input = Buffer.concat([text, random, text]);
    const out = await collect(Readable.from([input]).pipe(parallelGzip({ blockBytes: 1024 * 1024 })));
    expect(gunzipSync(out).equals(input)).toBe(true);
    // The random bytes follow a gzip header and a stored block's (LEN 65535), as they were; zlib
    // at level 6 would have cut them into blocks of 16,384.
    const at = out.indexOf(random.subarray(0, 65535));
    expect(out.subarray(at - 15, at)).toEqual(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0, 0xff, 0xff, 0, 0]));
    expect(out.length - random.length).toBeLessThan(2 * 1024); // the text compressed
    const gzipT = spawnSync('gzip', ['-t'], { input: out });
    if (!gzipT.error) expect(gzipT.status).toBe(0);
  });

  it('an empty input is one empty member', async () => {
    const out = await collect(Readable.from([]).pipe(parallelGzip()));
    expect(gunzipSync(out).length).toBe(0);
  });

  it('a backup-sized pack (several members) unpacks with Berth and with GNU tar', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'berth-pgz-'));
    const site = path.join(root, 'site');
    mkdirSync(path.join(site, 'a'), { recursive: true });
    const big = randomBytes(3 * 1024 * 1024 + 17);
    writeFileSync(path.join(site, 'a', 'big.bin'), big);
    writeFileSync(path.join(site, 'index.html'), '<h1>hi</h1>');
    const staging = path.join(root, 'staging');
    mkdirSync(staging);
    const archive = await collect(packArchive(root, staging, [{ dir: site, as: 'site' }], () => undefined));
    const file = path.join(root, 'out.tar.gz');
    writeFileSync(file, archive);
    const dest = path.join(root, 'dest');
    await unpackArchive({ file }, 'tar.gz', dest, { bytes: Number.MAX_SAFE_INTEGER, ratio: Number.POSITIVE_INFINITY });
    expect(readFileSync(path.join(dest, 'site', 'a', 'big.bin')).equals(big)).toBe(true);
    const tar = spawnSync('tar', ['-tzf', file], { encoding: 'utf8' });
    if (tar.error) return; // GNU tar absent: Berth's own reader has been checked above
    expect(tar.status).toBe(0);
    expect(tar.stdout).toContain('site/a/big.bin');
  });
});

describe('random-looking runs', () => {
  it('cuts a block into runs of random-looking and other segments at segment boundaries', () => {
    const segment = 16 * 1024;
    const text = Buffer.alloc(2 * segment, 'berth ');
    const block = Buffer.concat([text, randomBytes(3 * segment), text, Buffer.from('tail')]);
    const runs = storedRuns(block);
    expect(runs.map((r) => [r.stored, r.bytes.length])).toEqual([
      [false, 2 * segment],
      [true, 3 * segment],
      [false, 2 * segment + 4],
    ]);
    expect(Buffer.concat(runs.map((r) => r.bytes)).equals(block)).toBe(true);
  });

  it('a block of text, or too short to judge, is one run for deflate', () => {
    expect(storedRuns(Buffer.alloc(100_000, 'abc')).map((r) => r.stored)).toEqual([false]);
    expect(storedRuns(randomBytes(1000)).map((r) => r.stored)).toEqual([false]);
    expect(storedRuns(Buffer.alloc(0))).toEqual([{ bytes: Buffer.alloc(0), stored: false }]);
  });
});

describe('stored gzip members', () => {
  it.each([1, 65535, 65536, 200_000])('a member of %i bytes gunzips to them, and gzip -t accepts it', (size) => {
    const bytes = randomBytes(size);
    const member = Buffer.concat(storedMember(bytes));
    expect(member.length).toBe(bytes.length + 10 + 8 + 5 * Math.ceil(size / 65535));
    expect(gunzipSync(member).equals(bytes)).toBe(true);
    const gzipT = spawnSync('gzip', ['-t'], { input: member });
    if (!gzipT.error) expect(gzipT.status).toBe(0);
  });
});
