import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BackupPart, BackupPartName } from '../../src/contribution.js';
import { stageCopy } from '../../src/modules/moves/copy.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'berth-move-copy-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A part whose stage runs `staging` (its own file written once that is done), recording its start and end. */
const part = (name: BackupPartName, log: string[], staging: () => Promise<void>): BackupPart => ({
  name,
  async stage(_accountId, dir) {
    log.push(`${name} started`);
    await staging();
    writeFileSync(path.join(dir, `${name}.json`), '{}');
    log.push(`${name} done`);
    return { manifest: {}, dirs: [], contents: {} };
  },
  restore: async () => undefined,
  land: async () => undefined,
});

const copy = (parts: BackupPart[]) =>
  stageCopy(parts, {
    accountId: 'acc_1',
    from: { web: 'srv_a' },
    to: { web: 'srv_b' },
    staging: path.join(root, 'staging'),
    listings: path.join(root, 'listings'),
    final: true,
  });

describe('a move’s copy', () => {
  it('copies every part at the same time: one waits for another that started after it', async () => {
    const log: string[] = [];
    let databasesStarted = () => undefined as void;
    const started = new Promise<void>((resolve) => {
      databasesStarted = resolve;
    });
    const parts = [
      part('sites', log, () => started),
      part('databases', log, async () => {
        databasesStarted();
      }),
    ];
    expect(await copy(parts)).toBe(4); // the two files of `{}`
    expect(log.slice(0, 2)).toEqual(['sites started', 'databases started']);
    expect(log.slice(2).sort()).toEqual(['databases done', 'sites done']);
  });

  it('fails once every part has settled: none still writes when the step is run again', async () => {
    const log: string[] = [];
    let release = () => undefined as void;
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const parts = [
      part('sites', log, () => slow),
      part('databases', log, async () => {
        setImmediate(release);
        throw new Error('the dump failed');
      }),
    ];
    await expect(copy(parts)).rejects.toThrow('the dump failed');
    expect(log).toEqual(['sites started', 'databases started', 'sites done']);
  });
});
