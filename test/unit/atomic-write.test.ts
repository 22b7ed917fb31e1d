import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/provisioning/atomic-write.js';

const dir = mkdtempSync(path.join(tmpdir(), 'berth-atomic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeFileAtomic', () => {
  it('gives every rewrite a later whole-second mtime, so a same-size change within a second is seen', async () => {
    const file = path.join(dir, 'passwd');
    const seconds = () => Math.floor(statSync(file).mtimeMs / 1000);
    await writeFileAtomic(file, 'box@example.com:{ARGON2ID}aaaa\n', 0o640);
    const first = seconds();
    // The same length, at once: what a password change does to the passwd-file.
    await writeFileAtomic(file, 'box@example.com:{ARGON2ID}bbbb\n', 0o640);
    const second = seconds();
    await writeFileAtomic(file, 'box@example.com:{ARGON2ID}cccc\n', 0o640);
    expect(second).toBeGreaterThan(first);
    expect(seconds()).toBeGreaterThan(second);
    expect(readFileSync(file, 'utf8')).toBe('box@example.com:{ARGON2ID}cccc\n');
    expect(statSync(file).mode & 0o777).toBe(0o640);
  });
});
