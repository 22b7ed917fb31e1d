import { lchown, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { signalDaemon } from '../../lib/daemon-pid.js';
import { mutex } from '../../lib/mutex.js';
import { runCommand } from '../../lib/run-command.js';
import type { MailDriver } from '../driver.js';
import { mailboxHome, type MailDomainSpec } from '../render/mail.js';
import { flushAuthCache, kickUsers } from './dovecot-auth.js';
import { EmbeddedMailDriver, POSTFIX_MAPS } from './embedded-mail.js';

/**
 * `chown -R owner` of each directory without a process (one took 40–90 ms to start on a busy
 * machine): the directory and all below it, links themselves rather than what they point to, as
 * `chown -R` does. A file the mail server removes meanwhile is passed over.
 */
async function giveTrees(dirs: string[], owner: string): Promise<void> {
  const [uid, gid] = owner.split(':').map(Number) as [number, number];
  const give = (p: string) =>
    lchown(p, uid, gid).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  await Promise.all(
    dirs.map(async (dir) => {
      const below = await readdir(dir, { recursive: true });
      await Promise.all([dir, ...below.map((p) => path.join(dir, p))].map(give));
    }),
  );
}

interface Settings {
  queueDirectory: string;
  authMaster: string;
  postmapped: ReadonlySet<string>;
}

/** The table types (`hash`, `texthash`, …) Postfix's configuration reads this file as. */
export function tableTypes(config: string, file: string): Set<string> {
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new Set([...config.matchAll(new RegExp(`([a-z]+):${escaped}(?![\\w./-])`, 'g'))].map((m) => m[1] as string));
}

export interface DovecotPostfixOptions {
  /** Where Dovecot's users (`users.dict`) and Postfix's tables are read from. */
  mapsDir: string;
  /** `uid:gid` the Maildirs belong to (Dovecot's `mail_uid`/`mail_gid`); null: Berth's own user. */
  owner: string | null;
  /** Postfix's configuration directory (`postconf -c`, `postmap -c`). */
  postfixConfigDir: string;
  /** Dovecot's configuration (`doveconf -c`: where its auth-master socket is); null: its default. */
  dovecotConf: string | null;
  /** OpenDKIM's pid file: signalled to re-read its tables; null: no signer to tell. */
  opendkimPid: string | null;
  /** The port mail relayed to another server of the fleet goes to. */
  relayPort: number;
}

/**
 * Makes mail real with Dovecot (IMAP, LMTP delivery, quota) and Postfix (SMTP): the same files
 * the embedded driver renders, joined into `mapsDir`; then `postmap` builds the tables Postfix
 * reads as `hash:` (none for `texthash:`), a reload (SIGHUP to its master) picks them up, and
 * Dovecot's auth cache is flushed (`flushAuthCache`) so a changed password or a suspension
 * counts at the next login. Dovecot reads its users from `users.dict` (a dict passdb
 * and userdb over a file), which it looks at on every lookup: `in_sync` means the next login
 * sees the change. (A Dovecot still configured with the `passwd` file, which it looks at no more
 * than once a second, may take up to a second longer.) Every step runs again on a retry, so an
 * apply that failed because a daemon was down completes once it is back.
 */
export class DovecotPostfixMailDriver implements MailDriver {
  readonly name = 'dovecot-postfix';
  private readonly files: EmbeddedMailDriver;
  private readonly exclusive = mutex();
  /** What the daemons' configuration says, asked once (see ask). */
  private settings: Promise<Settings> | undefined;
  /** Each Postfix table's source as it was when `postmap` last built it (sourceVersion). */
  private readonly built = new Map<string, string>();
  /** Until a reload succeeds (a process starts owing one: tables may have been built by one that died before its reload). */
  private reloadOwed = true;

  constructor(
    dataDir: string,
    private readonly o: DovecotPostfixOptions,
  ) {
    this.files = new EmbeddedMailDriver(dataDir, { mapsDir: o.mapsDir, relayPort: o.relayPort });
  }

  async applyDomain(domain: MailDomainSpec): Promise<void> {
    await this.files.applyDomain(domain);
    // Dovecot works on mail as `mail_uid`, never as root: the homes Berth created must be its.
    // (Beside the tables' publishing: neither waits for the other.)
    const homes = domain.mailboxes.map((m) => mailboxHome(domain, m));
    await Promise.all([this.o.owner ? giveTrees(homes, this.o.owner) : null, this.publish()]);
    // A move's freeze ends the sessions opened before it as well (their next login is refused):
    // no message stored, moved or flagged through them misses the final copy.
    if (domain.deferred && !domain.relay) await kickUsers(this.o.dovecotConf, `*@${domain.name}`);
  }

  async removeDomain(name: string, root: string, options: { keepMaps: boolean }): Promise<void> {
    await this.files.removeDomain(name, root, options);
    await this.publish();
  }

  /** The new certificate is written, then Postfix reloads: its next smtpd processes serve it. */
  useCertificate(certificatePem: string, keyPem: string): Promise<boolean> {
    return this.exclusive(async () => {
      const changed = await this.files.useCertificate(certificatePem, keyPem);
      if (changed) await this.reloadPostfix();
      return changed;
    });
  }

  /**
   * Postfix's tables built again from the sources written since they were last built (side by
   * side), then a reload if any was (or an earlier reload has not been seen to succeed), while
   * Dovecot's auth cache is flushed. Building only what changed took a new mailbox's apply from
   * six `postmap`s in a row (about 250 ms on a busy machine) to the two or three it changed;
   * `texthash:` tables take none, and no process is started at all.
   */
  private publish(): Promise<void> {
    return this.exclusive(async () => {
      const settings = await this.asked();
      const flushed = flushAuthCache(settings.authMaster);
      const sources = await Promise.all(POSTFIX_MAPS.map((map) => this.sourceVersion(map)));
      const stale = POSTFIX_MAPS.filter((map, i) => this.built.get(map) !== sources[i]);
      await Promise.all(
        stale.map(async (map) => {
          if (settings.postmapped.has(map))
            await runCommand('postmap', ['-c', this.o.postfixConfigDir, `hash:${path.join(this.o.mapsDir, map)}`], 'postmap');
          this.built.set(map, sources[POSTFIX_MAPS.indexOf(map)] as string);
        }),
      );
      if (stale.length || this.reloadOwed) {
        this.reloadOwed = true;
        await this.reloadPostfix();
        this.reloadOwed = false;
      }
      await flushed;
      // SIGUSR1: OpenDKIM reloads its configuration, and with it the key and signing tables.
      if (this.o.opendkimPid) await signalDaemon('opendkim', this.o.opendkimPid, 'SIGUSR1');
    });
  }

  /**
   * `postfix reload` without its script: SIGHUP to the master process, which reads its
   * configuration again and has its daemons start afresh with the new tables (the script adds a
   * queue check around the same signal, and took about 90 ms to run on a busy machine).
   */
  private async reloadPostfix(): Promise<void> {
    const { queueDirectory } = await this.asked();
    // A signal that fails (the daemon is not running) fails the apply, which waits for it.
    await signalDaemon('postfix', path.join(queueDirectory, 'pid', 'master.pid'), 'SIGHUP', 'master');
  }

  /** The configuration asked once per process; a failed question is asked again at the next apply. */
  private asked(): Promise<Settings> {
    this.settings ??= this.ask().catch((err: unknown) => {
      this.settings = undefined;
      throw err;
    });
    return this.settings;
  }

  /**
   * Where Postfix's master writes its pid (`queue_directory`), where Dovecot's auth-master socket
   * is (`base_dir`), and which tables Postfix reads as `hash:` and so need `postmap` — every one
   * but those main.cf and master.cf name only as `texthash:`, which a Postfix process reads
   * when it starts (the reload starts them afresh) and which need no process of ours at all.
   */
  private async ask(): Promise<Settings> {
    const postfix = ['-c', this.o.postfixConfigDir, '-x'];
    const [main, master, baseDir] = await Promise.all([
      runCommand('postconf', postfix, 'postconf'),
      runCommand('postconf', [...postfix, '-P'], 'postconf -P'),
      runCommand('doveconf', [...(this.o.dovecotConf ? ['-c', this.o.dovecotConf] : []), '-h', 'base_dir'], 'doveconf'),
    ]);
    const queueDirectory = /^queue_directory = (.+)$/m.exec(main)?.[1];
    if (!queueDirectory) throw new Error('postconf failed: no queue_directory');
    const readAs = (map: string) => tableTypes(`${main}\n${master}`, path.join(this.o.mapsDir, map));
    const postmapped = new Set(
      POSTFIX_MAPS.filter((map) => {
        const types = readAs(map);
        return types.size === 0 || [...types].some((t) => t !== 'texthash');
      }),
    );
    return { queueDirectory, authMaster: path.join(baseDir.trim(), 'auth-master'), postmapped };
  }

  /**
   * Which file a map's source is: each write renames a new file over it, so its inode and
   * change time (in nanoseconds) name one version. Taken before `postmap` reads it: a source
   * replaced meanwhile is another version, built again at the next apply.
   */
  private async sourceVersion(map: string): Promise<string> {
    const st = await stat(path.join(this.o.mapsDir, map), { bigint: true }).catch(() => null);
    return st ? `${st.ino}:${st.ctimeNs}` : 'absent';
  }
}
