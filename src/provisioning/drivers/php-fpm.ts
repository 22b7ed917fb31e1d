import { chmod, chown, mkdir, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { loginHome } from '../../layout.js';
import { signalDaemon } from '../../lib/daemon-pid.js';
import { mutex } from '../../lib/mutex.js';
import { runCommand } from '../../lib/run-command.js';
import { writeFileAtomic } from '../atomic-write.js';
import type { PhpDriver } from '../driver.js';
import { renderPool, unixUser, type PhpPoolSpec } from '../render/php-fpm.js';
import { poolFile } from './embedded-php.js';
import { endUserProcesses, isPhpFpm, userExists } from './user-processes.js';

export interface PhpFpmOptions {
  /** Paths with `{version}` standing for `8.2`. */
  poolDir: string;
  fpmConf: string;
  fpmPid: string;
  socketDir: string;
  webGroup: string;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const forVersion = (template: string, version: string) => template.replaceAll('{version}', version);

/** Whether something accepts connections on the Unix socket. */
const answers = (socket: string) =>
  new Promise<boolean>((resolve) => {
    const c = net.connect(socket);
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });

/**
 * Runs accounts' PHP with the host's PHP-FPM masters (one per version, started by the system):
 * makes the account's Unix user (`useradd`, no login, no home of its own), writes its pool into
 * the version's pool directory, checks the whole configuration (`php-fpm<v> -t`; a rejected pool
 * is put back as it was) and reloads that master gracefully (SIGUSR2), then waits for the pool's
 * socket. Needs root, as PHP-FPM's master does.
 */
export class PhpFpmDriver implements PhpDriver {
  readonly name = 'php-fpm';
  private readonly exclusive = mutex();

  constructor(
    readonly versions: readonly string[],
    private readonly o: PhpFpmOptions,
  ) {}

  socket(username: string, version: string): string {
    return path.join(this.o.socketDir, `${unixUser(username)}-${version}.sock`);
  }

  ensurePools(pools: PhpPoolSpec[]): Promise<void> {
    return this.exclusive(async () => {
      for (const p of pools) {
        const user = await this.createUser(p.username, p.home);
        await this.confine(p, user);
        const file = poolFile(forVersion(this.o.poolDir, p.version), p.username);
        const content = renderPool(p, { user, socket: this.socket(p.username, p.version), webGroup: this.o.webGroup });
        const previous = await readFile(file, 'utf8').catch(() => null);
        const socket = this.socket(p.username, p.version);
        if (previous === content && (await answers(socket))) continue;
        await writeFileAtomic(file, content);
        try {
          await this.check(p.version);
        } catch (err) {
          await (previous === null ? rm(file, { force: true }) : writeFileAtomic(file, previous));
          throw err;
        }
        await this.reload(p.version);
        await this.waitFor(socket, p.version);
      }
    });
  }

  ensureUser(username: string, home: string): Promise<string> {
    return this.exclusive(async () => {
      const user = await this.createUser(username, home);
      await this.confine({ home, tmp: path.join(home, 'tmp') }, user);
      return user;
    });
  }

  prunePools(username: string, keep: readonly string[]): Promise<void> {
    return this.exclusive(async () => {
      for (const v of this.versions) {
        if (keep.includes(v)) continue;
        const file = poolFile(forVersion(this.o.poolDir, v), username);
        if ((await readFile(file, 'utf8').catch(() => null)) === null) continue;
        await rm(file, { force: true });
        // A master that reloads a configuration it cannot start with exits: never signal it unchecked.
        await this.check(v);
        await this.reload(v);
      }
    });
  }

  /** The user lives as long as the account: its files keep one owner whatever runs them. */
  async removeAccount(username: string): Promise<void> {
    await this.prunePools(username, []);
    const user = unixUser(username);
    await this.exclusive(async () => {
      if (await userExists(user)) await runCommand('userdel', [user], 'userdel');
    });
  }

  /** Its workers go (SIGKILL): the pools' masters start new ones when a request comes. */
  async endRequests(username: string): Promise<void> {
    const user = unixUser(username);
    if (await userExists(user)) await endUserProcesses(user, (name) => !isPhpFpm(name));
  }

  async own(dir: string, username: string): Promise<void> {
    const user = await this.exclusive(() => this.createUser(username, null));
    await runCommand('chown', ['-R', '--no-dereference', `${user}:${this.o.webGroup}`, '--', dir], 'chown');
    await runCommand('chmod', ['-R', 'u+rwX,g+rX,g-w,o-rwx', '--', dir], 'chmod');
  }

  /**
   * The account's home is root's (OpenSSH chroots SFTP into it only so), listable by the
   * account's group and traversable by others (Dovecot reaches the mail in it); its sites only by
   * the web server's group, its login home and temporary directory by the user alone.
   */
  private async confine(p: Pick<PhpPoolSpec, 'home' | 'tmp'>, user: string): Promise<void> {
    const ids = await this.ids(user);
    const group = await this.groupId(this.o.webGroup);
    await mkdir(p.tmp, { recursive: true });
    const sites = path.join(p.home, 'sites');
    await mkdir(sites, { recursive: true });
    const login = loginHome(p.home);
    await mkdir(login, { recursive: true });
    await chown(p.home, 0, ids.gid);
    await chmod(p.home, 0o751);
    await chown(login, ids.uid, ids.gid);
    await chmod(login, 0o700);
    await chown(sites, ids.uid, group);
    await chmod(sites, 0o750);
    await chown(p.tmp, ids.uid, ids.gid);
    await chmod(p.tmp, 0o700);
  }

  private async createUser(username: string, home: string | null): Promise<string> {
    const user = unixUser(username);
    if (!(await userExists(user))) {
      await runCommand(
        'useradd',
        [
          '--system',
          '--user-group',
          '--no-create-home',
          '--shell',
          '/usr/sbin/nologin',
          ...(home ? ['--home-dir', loginHome(home)] : []),
          user,
        ],
        'useradd',
      );
    }
    return user;
  }

  private async ids(user: string): Promise<{ uid: number; gid: number }> {
    const [uid, gid] = await Promise.all([runCommand('id', ['-u', user], 'id -u'), runCommand('id', ['-g', user], 'id -g')]);
    return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
  }

  private async groupId(group: string): Promise<number> {
    const line = await runCommand('getent', ['group', group], 'getent group');
    return Number(line.split(':')[2]);
  }

  private check(version: string): Promise<string> {
    return runCommand(`php-fpm${version}`, ['-t', '--fpm-config', forVersion(this.o.fpmConf, version)], `php-fpm${version} -t`);
  }

  /** A graceful reload: running requests finish (within the master's process_control_timeout). */
  private async reload(version: string): Promise<void> {
    await signalDaemon(`php-fpm${version}`, forVersion(this.o.fpmPid, version), 'SIGUSR2');
  }

  private async waitFor(socket: string, version: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      // Right after the signal the old master may still answer on an old socket: give it a moment.
      await pause(i === 0 ? 150 : 100);
      if (await answers(socket)) return;
    }
    throw new Error(`php-fpm${version} did not open the pool's socket`);
  }
}
