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
