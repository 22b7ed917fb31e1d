import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { discardStaged, receiveStaged } from '../../src/agent/staged.js';
import { tarGz } from '../helpers/archives.js';

/** A move's copy of a site on its new server before the cutover (src/agent/staged.ts). */
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const ids = { account_id: 'acc_01m8aaaaaaaaaaaaaaaaaaaaaa', site_id: 'site_01m8aaaaaaaaaaaaaaaaaaaaaa' };
const release = 'dpl_01m8aaaaaaaaaaaaaaaaaaaaaa';
const input = (entries: { path: string; content: string }[]) => async () => Readable.from([tarGz(entries)]);
const receive = (
  dataDir: string,
  o: { whole: boolean; gone?: string[]; files: number; bytes: number },
  entries: { path: string; content: string }[],
) =>
  receiveStaged(
    dataDir,
    { action: 'site.receive', ...ids, release, whole: o.whole, gone: o.gone, expect: { files: o.files, bytes: o.bytes } },
    input(entries),
  );

describe('a staged copy', () => {
  it('is received whole, then only what changed with the names gone removed; one that differs from what was sent fails', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-staged-'));
    dirs.push(dataDir);
    const copy = path.join(dataDir, 'accounts', ids.account_id, 'sites', ids.site_id, '.staged', release);
    await receive(dataDir, { whole: true, files: 2, bytes: 6 }, [
      { path: 'a.txt', content: 'aaa' },
      { path: 'old.txt', content: 'old' },
    ]);
    expect(readFileSync(path.join(copy, 'a.txt'), 'utf8')).toBe('aaa');
    // A name that leads outside the copy is never removed.
    writeFileSync(path.join(dataDir, 'outside.txt'), 'kept');
    await receive(dataDir, { whole: false, gone: ['old.txt', '../../../../../../outside.txt'], files: 2, bytes: 7 }, [
      { path: 'a.txt', content: 'AAA' },
      { path: 'b.txt', content: 'bbbb' },
    ]);
    expect(readFileSync(path.join(copy, 'a.txt'), 'utf8')).toBe('AAA');
    expect(existsSync(path.join(copy, 'old.txt'))).toBe(false);
    expect(readFileSync(path.join(dataDir, 'outside.txt'), 'utf8')).toBe('kept');
    await expect(receive(dataDir, { whole: false, files: 3, bytes: 7 }, [{ path: 'a.txt', content: 'AAA' }])).rejects.toThrow(
      /holds 2 files/,
    );

    // Discarded, nothing of the account is left.
    await discardStaged(dataDir, { action: 'site.discard', ...ids });
    expect(existsSync(path.join(dataDir, 'accounts', ids.account_id))).toBe(false);
  });
});
