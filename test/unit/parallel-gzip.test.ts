import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GzipBlocks } from '../../src/archives/parallel-gzip.js';
import { storedMemberBytes, storedRuns, writeStoredMember } from '../../src/archives/stored-gzip.js';

/** `chunks` written in, the members taken out as the producer in pack.ts does. */
async function gzipOf(chunks: Buffer[], o: ConstructorParameters<typeof GzipBlocks>[0] = {}): Promise<Buffer> {
  const gz = new GzipBlocks(o);
  const out: Buffer[] = [];
  for (const c of chunks) {
    gz.write(c);
    for await (const m of gz.members()) out.push(Buffer.from(m)); // a copy: the buffer is reused
  }
  for await (const m of gz.end()) out.push(Buffer.from(m));
  return Buffer.concat(out);
}

describe('parallel gzip', () => {
  it('writes the blocks in order as gzip members that gunzip reads back whole', async () => {
    const input = Buffer.concat([randomBytes(5000), Buffer.alloc(7000, 'a'), randomBytes(1234)]);
    const chunks = Array.from({ length: Math.ceil(input.length / 700) }, (_, i) => input.subarray(i * 700, (i + 1) * 700));
    const out = await gzipOf(chunks, { blockBytes: 1024, parallel: 3 });
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
    const out = await gzipOf([input]);
    expect(gunzipSync(out).equals(input)).toBe(true);
    // The random bytes follow a gzip header and a stored block's (LEN 65535), as they were; zlib
    // at level 6 would have cut them into blocks of 16,384.
    const at = out.indexOf(random.subarray(0, 65535));
    expect(out.subarray(at - 15, at)).toEqual(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0, 0xff, 0xff, 0, 0]));
    expect(out.length - random.length).toBeLessThan(2 * 1024); // the text compressed
    const gzipT = spawnSync('gzip', ['-t'], { input: out });
    if (!gzipT.error) expect(gzipT.status).toBe(0);
  });

  it('at level 0 stores every block as it is, compressible or not', async () => {
    const text = Buffer.alloc(300 * 1024, '<p>Berth backs up what the account holds.</p>\n');
    const input = Buffer.concat([text, randomBytes(100 * 1024)]);
    const out = await gzipOf([input], { blockBytes: 128 * 1024, zlib: { level: 0 } });
    expect(gunzipSync(out).equals(input)).toBe(true);
    // The text is there as it was (a stored block's bytes), and nothing was compressed.
    expect(out.includes(text.subarray(0, 65535))).toBe(true);
    expect(out.length).toBeGreaterThan(input.length);
    expect(out.length).toBeLessThan(input.length + 1024);
  });

  it('an empty input is one empty member', async () => {
    const out = await gzipOf([]);
    expect(gunzipSync(out).length).toBe(0);
  });

  it('reuses its blocks once their members are handed on', async () => {
    const gz = new GzipBlocks({ blockBytes: 1024, parallel: 3 });
    const blocks = new Set<ArrayBufferLike>();
    for (let i = 0; i < 20; i++) {
      const room = gz.room();
      blocks.add(room.buffer);
      room.fill(i % 7);
      gz.filled(room.length);
      for await (const m of gz.members()) expect(m.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    }
    for await (const m of gz.end()) expect(m.length).toBeGreaterThan(0);
    expect(blocks.size).toBeLessThanOrEqual(3);
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
    const member = Buffer.alloc(storedMemberBytes(size) + 3, 0xee);
    expect(writeStoredMember(bytes, member, 3)).toBe(member.length);
    expect(member.length).toBe(bytes.length + 10 + 8 + 5 * Math.ceil(size / 65535) + 3);
    expect(member.subarray(0, 3)).toEqual(Buffer.alloc(3, 0xee)); // what was before it, untouched
    expect(gunzipSync(member.subarray(3)).equals(bytes)).toBe(true);
    const gzipT = spawnSync('gzip', ['-t'], { input: member.subarray(3) });
    if (!gzipT.error) expect(gzipT.status).toBe(0);
  });
});
