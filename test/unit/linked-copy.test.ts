import { chmodSync, existsSync, lstatSync, mkdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linkedCopy } from '../../src/archives/linked-copy.js';
import { ArchiveRefused } from '../../src/archives/unpack.js';
import { testDir } from '../helpers/temp-dir.js';

/** A release-like tree: nested directories, files, a link inside it. */
function tree(root: string): string {
  const src = path.join(root, 'src');
  mkdirSync(path.join(src, 'a', 'b'), { recursive: true });
  chmodSync(path.join(src, 'a'), 0o750);
  writeFileSync(path.join(src, 'index.php'), '<?php echo 1;');
  writeFileSync(path.join(src, 'a', 'b', 'deep.txt'), 'deep');
  symlinkSync('a/b/deep.txt', path.join(src, 'link'));
  return src;
}

describe('linkedCopy (a move’s staged copy going live)', () => {
  it('copies the tree as hard links, directories with their modes, links as links, the source unchanged', async () => {
    const root = testDir('linked');
    const src = tree(root);
    const dest = path.join(root, 'dest');
    await linkedCopy(src, dest);
    for (const name of ['index.php', 'a/b/deep.txt', 'link'])
      expect(lstatSync(path.join(dest, name)).ino, name).toBe(lstatSync(path.join(src, name)).ino);
    expect(lstatSync(path.join(dest, 'link')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(dest, 'link'))).toBe('a/b/deep.txt');
    expect(statSync(path.join(dest, 'a')).mode & 0o777).toBe(0o750);
    expect(statSync(path.join(src, 'index.php')).nlink).toBe(2);
  });

  it('takes the place of what a retried step left at the destination', async () => {
    const root = testDir('linked');
    const src = tree(root);
    const dest = path.join(root, 'dest');
    mkdirSync(path.join(dest, 'stale'), { recursive: true });
    await linkedCopy(src, dest);
    expect(existsSync(path.join(dest, 'stale'))).toBe(false);
    expect(existsSync(path.join(dest, 'index.php'))).toBe(true);
  });

  it('refuses a link leading outside the copy, leaving nothing behind', async () => {
    const root = testDir('linked');
    const src = tree(root);
    symlinkSync('../../outside', path.join(src, 'a', 'escape'));
    const dest = path.join(root, 'dest');
    const refused = await linkedCopy(src, dest).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ArchiveRefused);
    expect((refused as ArchiveRefused).code).toBe('link_escapes');
    expect(existsSync(dest)).toBe(false);
  });
});
