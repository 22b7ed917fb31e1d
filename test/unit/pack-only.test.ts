import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { packArchive } from '../../src/archives/pack.js';

/** Every `lstat` the packer asks for. */
const looked = vi.hoisted(() => [] as string[]);
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  return { ...fs, lstat: (at: string) => (looked.push(at), fs.lstat(at)) };
});

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

it('packs a few names of thousands with a look at each directory and those names alone, not at every file', async () => {
  root = mkdtempSync(path.join(tmpdir(), 'berth-pack-only-'));
  for (let d = 0; d < 10; d++) {
    mkdirSync(path.join(root, `d${d}`));
    for (let f = 0; f < 100; f++) writeFileSync(path.join(root, `d${d}`, `f${f}.html`), `${d}/${f}`);
  }
  const entries: { type: string; size: number }[] = [];
  const packing = packArchive(root, [{ dir: root, as: '' }], (e) => entries.push(e), {
    only: new Set(['d3/f7.html', 'd9/f99.html']),
  });
  let bytes = 0;
  for await (const chunk of packing) bytes += chunk.length;
  expect(bytes).toBeGreaterThan(0);
  expect(entries.filter((e) => e.type === 'File')).toHaveLength(2);
  expect(entries.filter((e) => e.type === 'Directory')).toHaveLength(11);
  // The ten directories and the two files; every one of the thousand files before.
  expect(looked.length).toBeLessThanOrEqual(12);
});
