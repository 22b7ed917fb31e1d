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

/** A promise and what settles it. */
function gate() {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** A part that records its steps: its stage writes its own file after `staging`, its send (if any) runs `sending`. */
function part(
  name: BackupPartName,
  log: string[],
  o: { staging?: () => Promise<void>; sending?: () => Promise<void> } = {},
): BackupPart {
  return {
    name,
    async stage(_accountId, dir) {
      await o.staging?.();
      writeFileSync(path.join(dir, `${name}.json`), '{}');
      log.push(`${name} copied`);
      return { manifest: {}, dirs: [], contents: {} };
    },
    restore: async () => undefined,
    land: async () => undefined,
    sendAhead: o.sending
      ? async () => {
          log.push(`${name} sending`);
          await o.sending?.();
          log.push(`${name} sent`);
        }
      : undefined,
  };
}

const copy = (parts: BackupPart[]) =>
  stageCopy(parts, {
    accountId: 'acc_1',
    from: { web: 'srv_a', database: 'srv_a' },
    to: { web: 'srv_b', database: 'srv_b' },
    staging: path.join(root, 'staging'),
    listings: path.join(root, 'listings'),
    final: true,
  });

describe('a move’s copy', () => {
  it('copies the parts in turn, each sent on while the next copies', async () => {
    const log: string[] = [];
    const dumped = gate();
    const parts = [
      part('sites', log, { sending: () => dumped.opened }),
      part('databases', log, { staging: async () => dumped.open() }),
    ];
    expect(await copy(parts)).toBe(4); // the two files of `{}`
    // The sites were sent once the database's copy had begun (the one lets the other finish).
    expect(log.slice(0, 2)).toEqual(['sites copied', 'sites sending']);
    expect(log.slice(2).sort()).toEqual(['databases copied', 'sites sent']);
  });

  it('fails once every send has settled: nothing still writes when the step is run again', async () => {
    const log: string[] = [];
    const slow = gate();
    const parts = [
      part('sites', log, { sending: () => slow.opened }),
      part('databases', log, {
        staging: async () => {
          setImmediate(slow.open);
          throw new Error('the dump failed');
        },
      }),
    ];
    await expect(copy(parts)).rejects.toThrow('the dump failed');
    expect(log).toEqual(['sites copied', 'sites sending', 'sites sent']);

    // A send that fails fails the copy too.
    const refused = [part('sites', [], { sending: async () => Promise.reject(new Error('the target refused it')) })];
    await expect(copy(refused)).rejects.toThrow('the target refused it');
  });
});
