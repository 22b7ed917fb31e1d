import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fileWriter, WriteFailed } from '../../src/archives/file-writer.js';

const roots: string[] = [];
const newRoot = () => {
  const root = mkdtempSync(path.join(tmpdir(), 'berth-writer-'));
  roots.push(root);
  return root;
};
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

describe('file writer (worker thread)', () => {
  it('writes files, directories and links across many batches; a later member replaces an earlier file', async () => {
    const root = newRoot();
    const w = fileWriter(root, { batchBytes: 1000 });
    const big = Buffer.alloc(5000, 7);
    try {
      w.dir('empty');
      for (let i = 0; i < 50; i++) {
        w.open(`d${i % 5}/f${i}.txt`);
        w.write(Buffer.from(`file ${i} `.repeat(40)));
        w.write(Buffer.from('end'));
        w.close();
      }
      w.open('big.bin');
      for (let at = 0; at < big.length; at += 700) w.write(big.subarray(at, at + 700));
      w.close();
      w.open('d0/f0.txt');
      w.write(Buffer.from('replaced'));
      w.close();
      w.link('hard.bin', 'big.bin');
      w.symlink('d1/up', '../big.bin');
      await w.finish();
    } finally {
      await w.destroy();
    }
    expect(statSync(path.join(root, 'empty')).isDirectory()).toBe(true);
    expect(readFileSync(path.join(root, 'd3/f13.txt'), 'utf8')).toBe(`${'file 13 '.repeat(40)}end`);
    expect(readFileSync(path.join(root, 'd0/f0.txt'), 'utf8')).toBe('replaced');
    expect(readFileSync(path.join(root, 'big.bin'))).toEqual(big);
    expect(statSync(path.join(root, 'big.bin')).mode & 0o777).toBe(0o644);
    expect(statSync(path.join(root, 'hard.bin')).ino).toBe(statSync(path.join(root, 'big.bin')).ino);
    expect(lstatSync(path.join(root, 'd1/up')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(root, 'd1/up'))).toBe('../big.bin');
  });

  it('is busy past the pending limit until the worker has caught up', async () => {
    const w = fileWriter(newRoot(), { batchBytes: 1024, maxPendingBytes: 4096 });
    try {
      w.open('a.bin');
      for (let i = 0; i < 8; i++) w.write(Buffer.alloc(1024, i));
      expect(w.busy).toBe(true);
      await w.drained();
      expect(w.busy).toBe(false);
      w.close();
      await w.finish();
    } finally {
      await w.destroy();
    }
  });

  // Node closes the descriptors a worker opened when it ends; the writer relies on that when an
  // unpacking is stopped halfway (a thread with a file open is not kept for the next).
  it('leaves no descriptor open when it is stopped in the middle of a file', async () => {
    const root = newRoot();
    const openUnderRoot = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(root);
        } catch {
          return false; // closed meanwhile
        }
      }).length;
    const w = fileWriter(root, { batchBytes: 1 });
    w.open('half.bin');
    w.write(Buffer.alloc(1024));
    await w.finish();
    expect(openUnderRoot()).toBe(1);
    await w.destroy();
    expect(openUnderRoot()).toBe(0);
  });

  it('fails what is given after it was stopped, rather than waiting for it', async () => {
    const w = fileWriter(newRoot());
    await w.destroy();
    w.open('late.txt');
    w.close();
    await expect(w.finish()).rejects.toMatchObject({ code: 'EIO' });
  });

  it('reports the first failure once, with the member and the system code', async () => {
    const errors: WriteFailed[] = [];
    const root = newRoot();
    const w = fileWriter(root, { onError: (err) => errors.push(err) });
    try {
      w.open('a');
      w.close();
      w.open('a/b');
      w.close();
      w.open('c');
      w.close();
      const failed = await w.finish().catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(WriteFailed);
      expect(failed).toMatchObject({ member: 'a/b', code: 'EEXIST' });
      expect(errors).toEqual([failed]);
    } finally {
      await w.destroy();
    }
    expect(() => statSync(path.join(root, 'c'))).toThrow();
  });

  it('keeps a finished thread for the next unpacking, which starts afresh in its own root; never a failed one', async () => {
    const write = async (root: string, member: string) => {
      const w = fileWriter(root);
      w.open(member);
      w.write(Buffer.from(member));
      w.close();
      const failed = await w.finish().then(
        () => null,
        (err: unknown) => err,
      );
      await w.destroy();
      return { thread: w.threadId, failed };
    };
    const first = await write(newRoot(), 'd/a.txt');
    const root = newRoot();
    // The same directory name in another root: made again there, not taken as made already.
    const second = await write(root, 'd/b.txt');
    expect(second).toEqual({ thread: first.thread, failed: null });
    expect(readFileSync(path.join(root, 'd/b.txt'), 'utf8')).toBe('d/b.txt');

    const blocked = newRoot();
    writeFileSync(path.join(blocked, 'd'), 'a file where a directory must go');
    const third = await write(blocked, 'd/c.txt');
    expect(third.thread).toBe(first.thread);
    expect(third.failed).toMatchObject({ code: 'EEXIST', member: 'd/c.txt' });
    const fourth = await write(newRoot(), 'e.txt');
    expect(fourth.failed).toBeNull();
    expect(fourth.thread).not.toBe(first.thread);
  });

  it('ends a kept thread unused for a minute, and never hands out one that is ending', async () => {
    const write = async (member: string) => {
      const root = newRoot();
      const w = fileWriter(root);
      w.open(member);
      w.write(Buffer.from(member));
      w.close();
      await w.finish();
      await w.destroy();
      expect(readFileSync(path.join(root, member), 'utf8')).toBe(member);
      return w.threadId;
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const kept = await write('a.txt');
      expect(await write('b.txt')).toBe(kept);
      vi.advanceTimersByTime(60_000);
      // Asked for at once, while the kept thread is still ending: a new one writes it.
      const next = await write('c.txt');
      expect(next).not.toBe(kept);
    } finally {
      vi.useRealTimers();
    }
  });
});
