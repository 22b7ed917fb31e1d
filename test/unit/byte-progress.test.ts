import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { bytesUnder } from '../../src/archives/pack.js';
import { byteProgress } from '../../src/lib/byte-progress.js';
import { testDir } from '../helpers/temp-dir.js';

describe('progress in bytes', () => {
  it('maps bytes done onto [from, to] against the total, never past `to`', () => {
    const seen: number[] = [];
    const p = byteProgress({ total: 1000, from: 5, to: 95, everyMs: 0, report: (n) => seen.push(n) });
    p.add(0);
    p.add(500);
    p.add(500);
    p.add(500);
    expect(seen).toEqual([5, 50, 95, 95]);
  });

  it('reports at most every everyMs', () => {
    const seen: number[] = [];
    const p = byteProgress({ total: 10, from: 0, to: 100, everyMs: 60_000, report: (n) => seen.push(n) });
    for (let i = 0; i < 10; i++) p.add(1);
    expect(seen).toEqual([10]);
  });

  it('counts what flows through its counter stream', async () => {
    const seen: number[] = [];
    const p = byteProgress({ total: 6, from: 0, to: 100, everyMs: 0, report: (n) => seen.push(n) });
    await pipeline(
      Readable.from([Buffer.from('abc'), Buffer.from('def')]),
      p.counter(),
      new Writable({ write: (_c, _e, done) => done() }),
    );
    expect(seen).toEqual([50, 100]);
  });

  it('the total of a pack: regular files under the directories, links not followed', async () => {
    const dir = testDir('bytes');
    mkdirSync(path.join(dir, 'a', 'b'), { recursive: true });
    writeFileSync(path.join(dir, 'a', 'one'), 'x'.repeat(100));
    writeFileSync(path.join(dir, 'a', 'b', 'two'), 'y'.repeat(23));
    symlinkSync(path.join(dir, 'a', 'one'), path.join(dir, 'a', 'link'));
    expect(await bytesUnder([path.join(dir, 'a'), path.join(dir, 'missing')])).toBe(123);
    // A file named itself counts itself.
    expect(await bytesUnder([path.join(dir, 'a', 'b'), path.join(dir, 'a', 'one')])).toBe(123);
    // More entries than one slice of lstat calls, beside a directory.
    for (let i = 0; i < 150; i++) writeFileSync(path.join(dir, 'a', 'b', `f${i}`), 'z'.repeat(i));
    expect(await bytesUnder([path.join(dir, 'a')])).toBe(123 + (149 * 150) / 2);
  });
});
