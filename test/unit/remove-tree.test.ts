import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { onThread, removeTree } from '../../src/lib/remove-tree.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map(removeTree));
});

/** A tree of nested directories and files, with a link to a directory outside it. */
function tree(): { root: string; outside: string } {
  const base = mkdtempSync(path.join(tmpdir(), 'berth-remove-tree-'));
  made.push(base);
  const root = path.join(base, 'tree');
  const outside = path.join(base, 'outside');
  mkdirSync(path.join(root, 'a', 'b'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'kept'), 'kept');
  for (const dir of ['', 'a', 'a/b']) writeFileSync(path.join(root, dir, 'file'), 'x');
  symlinkSync(outside, path.join(root, 'a', 'link'));
  return { root, outside };
}

it('removes a whole tree, and only the link to a directory outside it, not what the link names', async () => {
  const { root, outside } = tree();
  await removeTree(root);
  expect(existsSync(root)).toBe(false);
  expect(existsSync(path.join(outside, 'kept'))).toBe(true);
});

it('takes a path where nothing is as done, as rm -rf does', async () => {
  const { root } = tree();
  await expect(removeTree(path.join(root, 'nothing-here'))).resolves.toBeUndefined();
});

it('removes trees asked for at once, and says why one cannot be removed', async () => {
  const trees = [tree(), tree(), tree()];
  const { outside } = tree();
  const removals = [
    ...trees.map(({ root }) => removeTree(root)),
    removeTree(path.join(outside, 'kept', 'under-a-file')),
    // A directory whose entries the kernel refuses to unlink, to root too.
    removeTree('/proc/self/fdinfo'),
  ];
  const settled = await Promise.allSettled(removals);
  expect(settled.slice(0, 3).map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
  expect(settled[3]).toMatchObject({ status: 'rejected', reason: { code: 'ENOTDIR' } });
  expect(settled[4]).toMatchObject({ status: 'rejected', reason: { code: expect.stringMatching(/^(EPERM|EACCES)$/) } });
  for (const { root } of trees) expect(existsSync(root)).toBe(false);
});

it('ends its thread after a minute without trees, and removes the next tree on a new one', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    await removeTree(tree().root);
    vi.advanceTimersByTime(60_000);
    // Asked for while the idle thread is told to end.
    const { root } = tree();
    await removeTree(root);
    expect(existsSync(root)).toBe(false);
  } finally {
    vi.useRealTimers();
  }
});

it("leaves a few files without a directory among them to Node's rm, and hands a tree or many names to the thread", async () => {
  const { root, outside } = tree();
  const list = (dir: string) => readdirSync(dir, { withFileTypes: true });
  expect(onThread(list(outside))).toBe(false);
  expect(onThread(list(root))).toBe(true);
  for (let i = 0; i < 64; i++) writeFileSync(path.join(outside, `f${i}`), 'x');
  expect(onThread(list(outside))).toBe(true);
  await removeTree(outside);
  expect(existsSync(outside)).toBe(false);
});
