import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { mutex } from '../../lib/mutex.js';
import { runCommand } from '../../lib/run-command.js';
import type { MailDriver } from '../driver.js';
import { mailboxHome, type MailDomainSpec } from '../render/mail.js';
import { EmbeddedMailDriver, POSTFIX_MAPS } from './embedded-mail.js';

export interface DovecotPostfixOptions {
  /** Where Dovecot's passwd-file and Postfix's tables are read from. */
  mapsDir: string;
  /** `uid:gid` the Maildirs belong to (Dovecot's `mail_uid`/`mail_gid`); null: Berth's own user. */
  owner: string | null;
  /** Postfix's configuration directory (`postmap -c`, `postfix -c`). */
  postfixConfigDir: string;
  /** Dovecot's configuration (`doveadm -c`); null: its default. */
  dovecotConf: string | null;
  /** OpenDKIM's pid file: signalled to re-read its tables; null: no signer to tell. */
  opendkimPid: string | null;
  /** The port mail relayed to another server of the fleet goes to. */
  relayPort: number;
}

/**
 * Makes mail real with Dovecot (IMAP, LMTP delivery, quota) and Postfix (SMTP): the same files
 * the embedded driver renders, joined into `mapsDir`; then `postmap` builds Postfix's tables,
 * `postfix reload` picks them up and `doveadm auth cache flush` makes a changed password or a
 * suspension count at the next login. Dovecot re-reads the passwd-file when its mtime (whole
 * seconds) or size changed, looking at most once a second: an apply ends only once the second
 * in which the file was written is over, so that `in_sync` means logins see the new file.
 * Every step runs again on a retry, so an apply that failed because a daemon was down
 * completes once it is back.
 */
export class DovecotPostfixMailDriver implements MailDriver {
  readonly name = 'dovecot-postfix';
  private readonly files: EmbeddedMailDriver;
  private readonly exclusive = mutex();

  constructor(
    dataDir: string,
    private readonly o: DovecotPostfixOptions,
  ) {
    this.files = new EmbeddedMailDriver(dataDir, { mapsDir: o.mapsDir, relayPort: o.relayPort });
  }

  async applyDomain(domain: MailDomainSpec): Promise<void> {
    await this.files.applyDomain(domain);
    // Dovecot works on mail as `mail_uid`, never as root: the homes Berth created must be its.
    const homes = domain.mailboxes.map((m) => mailboxHome(domain, m));
    if (this.o.owner && homes.length) await runCommand('chown', ['-R', this.o.owner, ...homes], 'chown');
    await this.publish();
  }

  async removeDomain(name: string, root: string, options: { keepMaps: boolean }): Promise<void> {
    await this.files.removeDomain(name, root, options);
    await this.publish();
  }

  /** The new certificate is written, then Postfix reloads: its next smtpd processes serve it. */
  useCertificate(certificatePem: string, keyPem: string): Promise<boolean> {
    return this.exclusive(async () => {
      const changed = await this.files.useCertificate(certificatePem, keyPem);
      if (changed) await runCommand('postfix', ['-c', this.o.postfixConfigDir, 'reload'], 'postfix reload');
      return changed;
    });
  }

  private publish(): Promise<void> {
    return this.exclusive(async () => {
      const written = Date.now();
      const postfix = ['-c', this.o.postfixConfigDir];
      for (const map of POSTFIX_MAPS)
        await runCommand('postmap', [...postfix, `hash:${path.join(this.o.mapsDir, map)}`], 'postmap');
      await runCommand('postfix', [...postfix, 'reload'], 'postfix reload');
      const dovecot = this.o.dovecotConf ? ['-c', this.o.dovecotConf] : [];
      await runCommand('doveadm', [...dovecot, 'auth', 'cache', 'flush'], 'doveadm auth cache flush');
      if (this.o.opendkimPid) {
        // SIGUSR1: OpenDKIM reloads its configuration, and with it the key and signing tables.
        const pid = Number((await readFile(this.o.opendkimPid, 'utf8').catch(() => '')).trim());
        if (!pid) throw new Error('opendkim is not running (no pid)');
        try {
          process.kill(pid, 'SIGUSR1');
        } catch (err) {
          // A pid file left behind by a signer that died: the apply waits for it to be back.
          if ((err as NodeJS.ErrnoException).code === 'ESRCH') throw new Error(`opendkim is not running (pid ${pid} is gone)`);
          throw err;
        }
      }
      const nextSecond = (Math.floor(written / 1000) + 1) * 1000;
      if (Date.now() < nextSecond) await new Promise((r) => setTimeout(r, nextSecond - Date.now()));
    });
  }
}
