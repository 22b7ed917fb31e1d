import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { directoryBytes } from '../../src/lib/disk.js';
import { testDir } from '../helpers/temp-dir.js';

describe('directoryBytes (quota checks, mailbox usage)', () => {
  it('adds every regular file at every depth, passes over links and the skipped top-level entries', async () => {
    const root = testDir('disk');
    mkdirSync(path.join(root, 'mail', 'box', 'Maildir', 'cur'), { recursive: true });
    mkdirSync(path.join(root, 'sites', 'release'), { recursive: true });
    writeFileSync(path.join(root, 'top.txt'), 'x'.repeat(10));
    writeFileSync(path.join(root, 'mail', 'box', 'Maildir', 'cur', 'm1'), 'x'.repeat(100));
    writeFileSync(path.join(root, 'mail', 'box', 'Maildir', 'cur', 'm2'), 'x'.repeat(1000));
    writeFileSync(path.join(root, 'sites', 'release', 'big'), 'x'.repeat(10_000));
    symlinkSync(path.join(root, 'sites', 'release', 'big'), path.join(root, 'mail', 'link'));
    expect(await directoryBytes(root)).toBe(11_110);
    expect(await directoryBytes(root, ['sites'])).toBe(1_110);
    expect(await directoryBytes(path.join(root, 'mail'))).toBe(1_100);
  });

  it('counts more files than one slice of lstat calls', async () => {
    const root = testDir('disk-many');
    mkdirSync(path.join(root, 'a', 'b'), { recursive: true });
    for (let i = 0; i < 300; i++) writeFileSync(path.join(root, 'a', i % 2 ? 'b' : '', `f${i}`), 'x'.repeat(i));
    expect(await directoryBytes(root)).toBe((299 * 300) / 2);
  });

  it('is 0 for a directory that does not exist yet', async () => {
    expect(await directoryBytes(path.join(testDir('disk-none'), 'absent'))).toBe(0);
  });
});
