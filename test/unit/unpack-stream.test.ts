import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ArchiveRefused, unpackArchive } from '../../src/archives/unpack.js';
import { tarGz } from '../helpers/archives.js';

const root = mkdtempSync(path.join(tmpdir(), 'berth-unpack-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A body as a socket delivers it: small chunks, each on a later turn of the event loop. */
function trickle(bytes: Buffer, chunk = 16 * 1024): Readable {
  let at = 0;
  return new Readable({
    read() {
      setImmediate(() => {
        this.push(at < bytes.length ? bytes.subarray(at, (at += chunk)) : null);
      });
    },
  });
}

const limits = { bytes: 1e9, ratio: 200 };

describe('unpacking a tar.gz as it streams in', () => {
  const files = [0, 1, 2].map((i) => ({ path: `d/f${i}.bin`, content: randomBytes(1_500_000) }));
  const archive = tarGz(files);

  it('joins small chunks into larger pieces for zlib and writes every byte', async () => {
    const dest = path.join(root, 'ok');
    expect(await unpackArchive({ stream: trickle(archive) }, 'tar.gz', dest, limits)).toEqual({ files: 3, bytes: 4_500_000 });
    for (const f of files) expect(readFileSync(path.join(dest, f.path)).equals(f.content)).toBe(true);
  });

  it('tells each regular file it wrote, by member name and size', async () => {
    const told: [string, number][] = [];
    await unpackArchive({ stream: trickle(archive) }, 'tar.gz', path.join(root, 'told'), {
      ...limits,
      onFile: (member, bytes) => told.push([member, bytes]),
    });
    expect(told).toEqual(files.map((f) => [f.path, 1_500_000]));
  });

  it('refuses a body that ends mid-stream, leaving nothing', async () => {
    const dest = path.join(root, 'cut');
    const cut = unpackArchive({ stream: trickle(archive.subarray(0, 2_500_000)) }, 'tar.gz', dest, limits);
    await expect(cut).rejects.toBeInstanceOf(ArchiveRefused);
    await expect(cut).rejects.toMatchObject({ code: 'invalid_archive' });
    expect(() => readFileSync(path.join(dest, 'd/f0.bin'))).toThrow();
  });
});
