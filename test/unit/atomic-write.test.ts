import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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

  it('gives a later second to a rewrite just after the clock turned, while the file system clock still lags', async () => {
    // The kernel stamps files with a coarse clock a few milliseconds behind Date.now(), so a file
    // written in the first milliseconds of a second is stamped with the second before.
    const millisecond = () => Date.now() % 1000;
    const untilSecondEnds = async () => {
      if (millisecond() < 970) await sleep(970 - millisecond());
      while (millisecond() < 992); // its last milliseconds, spun
    };
    for (let round = 0; round < 3; round++) {
      const file = path.join(dir, `turn-${round}`);
      await untilSecondEnds();
      writeFileSync(file, 'password-a\n');
      const before = Math.floor(statSync(file).mtimeMs / 1000);
      while (millisecond() >= 992); // the next second has begun
      await writeFileAtomic(file, 'password-b\n');
      expect(Math.floor(statSync(file).mtimeMs / 1000)).toBeGreaterThan(before);
    }
  });
});
