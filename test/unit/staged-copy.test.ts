import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { unpackMail } from '../../src/agent/mail.js';
import { discardStaged, receiveStaged, sweepStaged } from '../../src/agent/staged.js';
import { tarGz } from '../helpers/archives.js';

/** A move's copy of a site or of the maildirs on its new server before the cutover (src/agent/staged.ts). */
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

  it('of the maildirs is put in place at the land, a run again keeps what the first moved, and one with nothing staged fails', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-staged-'));
    dirs.push(dataDir);
    const mail = path.join(dataDir, 'accounts', ids.account_id, 'mail');
    const box = (id: string) => path.join(mail, 'example.com', id, 'Maildir', 'new', 'm1');
    const staged = { action: 'mail.receive' as const, account_id: ids.account_id, whole: true, expect: { files: 2, bytes: 4 } };
    await receiveStaged(
      dataDir,
      staged,
      input([
        { path: 'example.com/box_a/Maildir/new/m1', content: 'aa' },
        { path: 'example.com/box_b/Maildir/new/m1', content: 'bb' },
      ]),
    );
    expect(readFileSync(path.join(mail, '.staged', 'example.com', 'box_a', 'Maildir', 'new', 'm1'), 'utf8')).toBe('aa');
    // The mail apply made box_a's Maildir; box_b's was moved by a run that was killed before the end.
    mkdirSync(path.dirname(box('box_a')), { recursive: true });
    mkdirSync(path.dirname(box('box_b')), { recursive: true });
    rmSync(path.join(mail, '.staged', 'example.com', 'box_b'), { recursive: true });
    writeFileSync(box('box_b'), 'bb');
    writeFileSync(path.join(path.dirname(box('box_b')), 'delivered-since'), 'cc');
    const land = {
      account_id: ids.account_id,
      staged: true,
      mailboxes: ['box_a', 'box_b'].map((id) => ({ domain: 'example.com', id })),
    };
    const noInput = async (): Promise<Readable> => {
      throw new Error('no input is read');
    };
    await unpackMail(dataDir, land, noInput, 'tsk_1');
    expect(readFileSync(box('box_a'), 'utf8')).toBe('aa');
    expect(readFileSync(path.join(path.dirname(box('box_b')), 'delivered-since'), 'utf8')).toBe('cc');
    expect(existsSync(path.join(mail, '.staged'))).toBe(false);
    // Run again once all of it is in place: nothing staged to take, the control plane sends its copy.
    await expect(unpackMail(dataDir, land, noInput, 'tsk_2')).rejects.toThrow(/no copy of the maildirs is staged/);
    expect(readFileSync(box('box_a'), 'utf8')).toBe('aa');
  });

  it('of the maildirs, discarded, leaves nothing of an account not served here', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-staged-'));
    dirs.push(dataDir);
    const task = { action: 'mail.receive' as const, account_id: ids.account_id, whole: true, expect: { files: 1, bytes: 2 } };
    await receiveStaged(dataDir, task, input([{ path: 'example.com/box_a/Maildir/new/m1', content: 'aa' }]));
    await discardStaged(dataDir, { action: 'mail.discard', account_id: ids.account_id });
    expect(existsSync(path.join(dataDir, 'accounts', ids.account_id))).toBe(false);
  });

  it('swept once older than kept, with the directories of an account not served here; a newer one and what is served stay', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-staged-'));
    dirs.push(dataDir);
    const other = 'acc_01m8bbbbbbbbbbbbbbbbbbbbbb';
    await receive(dataDir, { whole: true, files: 1, bytes: 3 }, [{ path: 'a.txt', content: 'aaa' }]);
    const mail = { action: 'mail.receive' as const, whole: true, expect: { files: 1, bytes: 2 } };
    await receiveStaged(
      dataDir,
      { ...mail, account_id: ids.account_id },
      input([{ path: 'example.com/box_a/Maildir/new/m1', content: 'aa' }]),
    );
    await receiveStaged(
      dataDir,
      { ...mail, account_id: other },
      input([{ path: 'example.com/box_b/Maildir/new/m1', content: 'bb' }]),
    );
    // The other account is served here (a site's live files) and its staged mail is as old.
    const served = path.join(dataDir, 'accounts', other, 'sites', 'site_x', 'current', 'index.html');
    mkdirSync(path.dirname(served), { recursive: true });
    writeFileSync(served, 'served');
    const now = Date.now();
    const old = new Date(now - 8 * 24 * 3600_000);
    for (const dir of [
      path.join(dataDir, 'accounts', ids.account_id, 'sites', ids.site_id, '.staged'),
      path.join(dataDir, 'accounts', ids.account_id, 'mail', '.staged'),
      path.join(dataDir, 'accounts', other, 'mail', '.staged'),
    ])
      utimesSync(dir, old, old);
    await sweepStaged(dataDir, 7 * 24 * 3600_000, now - 3600_000 * 24 * 2);
    // Kept two days ago (six days old then).
    expect(existsSync(path.join(dataDir, 'accounts', ids.account_id, 'mail', '.staged'))).toBe(true);
    await sweepStaged(dataDir, 7 * 24 * 3600_000, now);
    expect(existsSync(path.join(dataDir, 'accounts', ids.account_id))).toBe(false);
    expect(existsSync(path.join(dataDir, 'accounts', other, 'mail'))).toBe(false);
    expect(readFileSync(served, 'utf8')).toBe('served');
  });
});
