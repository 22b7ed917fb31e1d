import { randomBytes } from 'node:crypto';
import { chown, mkdir, open, readFile, readlink, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { loginHome } from '../../layout.js';
import { signalDaemon } from '../../lib/daemon-pid.js';
import { runCommand } from '../../lib/run-command.js';
import { writeFileAtomic } from '../atomic-write.js';
import type { SshDriver } from '../driver.js';
import { unixUser } from '../render/php-fpm.js';
import {
  parseSshdLogins,
  renderAuthorizedKeys,
  renderSshdDropIn,
  SSH_GROUPS,
  type SshAccountSpec,
  type SshLogin,
} from '../render/ssh.js';
import { endUserProcesses, isPhpFpm } from './user-processes.js';

export interface SshFilesOptions {
  /** The drop-in sshd includes: `/etc/ssh/sshd_config.d/berth.conf`. */
  dropIn: string;
  /** One key file per account user, root-owned and readable by the user's group alone. */
  keysDir: string;
  /** One link per SFTP-only user to its account's files: the path sshd chroots into. */
  chrootDir: string;
  /** The running sshd: its main configuration (checked with `sshd -t -f`) and pid file (SIGHUP); null renders only. */
  sshd: { config: string; pidFile: string } | null;
  /** sshd's log, whose accepted key logins are collected (null: not read), and where the read offset is kept. */
  log: { file: string; offsetFile: string } | null;
}

/** At most this much of the log is read per collection; the rest comes with the next. */
const MAX_LOG_READ = 4 << 20;

const SHELLS = { shell: '/bin/bash', other: '/usr/sbin/nologin' };

/**
 * SSH access as files: the drop-in (written once, checked with `sshd -t` before sshd is told to
 * reload, put back as it was when the check fails), a key file and a chroot link per account.
 * `openssh` also sets the account user's groups, login shell and home, and makes its password
 * `*` (no password matches; `!` would read as a locked account to an sshd without PAM). The
 * embedded default renders the same files into the data directory and touches no user.
 */
export class SshFilesDriver implements SshDriver {
  private groupsMade = false;

  constructor(
    readonly name: 'embedded' | 'openssh',
    private readonly o: SshFilesOptions,
  ) {}

  /** Level-triggered like every apply: a drop-in changed or removed by hand is written again. */
  private async ensureDropIn(): Promise<void> {
    const content = renderSshdDropIn(this.o);
    const previous = await readFile(this.o.dropIn, 'utf8').catch(() => null);
    if (previous !== content) {
      await mkdir(path.dirname(this.o.dropIn), { recursive: true });
      await writeFileAtomic(this.o.dropIn, content);
      if (this.o.sshd) {
        try {
          await runCommand('sshd', ['-t', '-f', this.o.sshd.config], 'sshd -t');
        } catch (err) {
          await (previous === null ? rm(this.o.dropIn, { force: true }) : writeFileAtomic(this.o.dropIn, previous));
          throw err;
        }
        await this.reload();
      }
    }
    await mkdir(this.o.keysDir, { recursive: true, mode: 0o755 });
    await mkdir(this.o.chrootDir, { recursive: true, mode: 0o755 });
  }

  /** sshd re-executes itself with the new configuration; sessions it already serves go on. */
  private async reload(): Promise<void> {
    await signalDaemon('sshd', (this.o.sshd as { pidFile: string }).pidFile, 'SIGHUP');
  }

  async applyAccount(spec: SshAccountSpec): Promise<void> {
    await this.ensureDropIn();
    const keys = renderAuthorizedKeys(spec);
    // Access taken away: the keys go first. Access given: the keys come last, once the user can use them.
    if (keys === null) await rm(this.keyFile(spec.user), { force: true });
    if (this.o.sshd) await this.setLogin(spec);
    await this.setChroot(spec.user, spec.access === 'sftp' ? spec.home : null);
    if (keys !== null) await this.writeKeys(spec.user, keys);
    // No new login is taken now; a move's freeze ends the sessions begun before it too, so that
    // nothing written through them misses the final copy.
    if (spec.frozen && this.o.sshd) await endUserProcesses(spec.user, isPhpFpm);
  }

  /** Its key file and chroot link go; its user (and the groups with it) goes with the account's PHP. */
  async removeAccount(username: string): Promise<void> {
    const user = unixUser(username);
    await rm(this.keyFile(user), { force: true });
    await this.setChroot(user, null);
  }

  /**
   * What sshd's log gained since the last look (first look: nothing, the log's past is not
   * news). A log rotated away (another inode, or shorter) is read from its start.
   */
  async collectLogins(): Promise<SshLogin[]> {
    if (!this.o.log) return [];
    const { file, offsetFile } = this.o.log;
    const seen = JSON.parse(await readFile(offsetFile, 'utf8').catch(() => 'null')) as { ino: number; offset: number } | null;
    const handle = await open(file, 'r').catch(() => null);
    if (!handle) return [];
    try {
      const { ino, size } = await handle.stat();
      let offset = seen === null ? size : seen.ino === ino && seen.offset <= size ? seen.offset : 0;
      const chunk = Buffer.alloc(Math.min(size - offset, MAX_LOG_READ));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset);
      // Whole lines only: a line still being written is read next time.
      const end = chunk.subarray(0, bytesRead).lastIndexOf(10) + 1;
      offset += end;
      await mkdir(path.dirname(offsetFile), { recursive: true });
      await writeFileAtomic(offsetFile, JSON.stringify({ ino, offset }), 0o600);
      return parseSshdLogins(chunk.subarray(0, end).toString('utf8'), new Date().toISOString());
    } finally {
      await handle.close();
    }
  }

  private keyFile = (user: string) => path.join(this.o.keysDir, path.basename(user));

  /** Root's file, readable by the user's group: sshd reads it as the user, who cannot change it. */
  private async writeKeys(user: string, content: string): Promise<void> {
    const file = this.keyFile(user);
    if ((await readFile(file, 'utf8').catch(() => null)) === content) return;
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFileAtomic(tmp, content, 0o640);
    try {
      if (this.o.sshd) await chown(tmp, 0, await this.groupId(user));
      await rename(tmp, file);
    } finally {
      await rm(tmp, { force: true });
    }
  }

  private async setChroot(user: string, target: string | null): Promise<void> {
    const link = path.join(this.o.chrootDir, path.basename(user));
    if (target === null) return rm(link, { force: true });
    if ((await readlink(link).catch(() => null)) === target) return;
    const tmp = `${link}.${randomBytes(6).toString('hex')}`;
    await symlink(target, tmp);
    await rename(tmp, link);
  }

  private async setLogin(spec: SshAccountSpec): Promise<void> {
    if (!this.groupsMade)
      for (const group of Object.values(SSH_GROUPS)) await runCommand('groupadd', ['-f', '--system', group], 'groupadd');
    this.groupsMade = true;
    const groups = spec.access === 'disabled' ? [SSH_GROUPS.all] : [SSH_GROUPS.all, SSH_GROUPS[spec.access]];
    const shell = spec.access === 'shell' ? SHELLS.shell : SHELLS.other;
    await runCommand(
      'usermod',
      ['--home', loginHome(spec.home), '--shell', shell, '--groups', groups.join(','), '--password', '*', spec.user],
      'usermod',
    );
  }

  private async groupId(user: string): Promise<number> {
    return Number((await runCommand('id', ['-g', user], 'id -g')).trim());
  }
}
