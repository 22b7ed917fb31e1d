import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { mutex } from '../../lib/mutex.js';
import { removeTree } from '../../lib/remove-tree.js';
import { inSlices } from '../../lib/slices.js';
import { writeFileIfChanged } from '../atomic-write.js';
import type { MailDriver } from '../driver.js';
import {
  mailboxHome,
  renderAutoresponderSieve,
  renderAuthDict,
  renderDkimTables,
  renderPasswdFile,
  renderRecipientAccess,
  renderSenderLoginMap,
  renderTransport,
  renderVirtualAliasMap,
  renderVirtualMailboxMap,
  type MailDomainSpec,
} from '../render/mail.js';

const MAPS = [
  'users.dict',
  'passwd',
  'virtual_mailbox_maps',
  'virtual_alias_maps',
  'sender_login_maps',
  'recipient_access',
  'transport',
  'dkim_key_table',
  'dkim_signing_table',
] as const;
type DomainFiles = Record<(typeof MAPS)[number], string>;

/** The joined files Postfix reads as `hash:` tables. */
export const POSTFIX_MAPS = [
  'virtual_mailbox_domains',
  'virtual_mailbox_maps',
  'virtual_alias_maps',
  'sender_login_maps',
  'recipient_access',
  'transport',
] as const;

/**
 * Renders each mail domain into `<dataDir>/rendered/mail/domains/<domain>/` and joins them into
 * the files Dovecot and Postfix read: `users.dict` (Dovecot's dict passdb and userdb; `passwd`, the
 * same as a passwd-file, for a Dovecot configured with one), `virtual_mailbox_domains`,
 * `virtual_mailbox_maps`, `virtual_alias_maps`, `recipient_access`, `transport` (Postfix `hash:`
 * sources, for `postmap`; a relayed domain's mail goes to `relayPort` of the server at its
 * address). It
 * creates the Maildirs and Sieve scripts in the account's home and serves nothing itself.
 * `mapsDir` puts the joined files where the daemons read them (default: the rendered directory).
 */
/**
 * How maildirs are removed: a mail server session still open on one (a client logged in as the
 * mailbox goes) can write into it while it is emptied, which fails once with ENOTEMPTY.
 */
const MAILDIRS = { recursive: true, force: true, maxRetries: 5, retryDelay: 50 } as const;

export class EmbeddedMailDriver implements MailDriver {
  readonly name = 'embedded';
  private readonly dir: string;
  private readonly accountsDir: string;
  private readonly mapsDir: string;
  private readonly relayPort: number;
  /** Joins run one at a time, so two domains applied at once cannot write a stale join last. */
  private readonly exclusive = mutex();
  /**
   * Each domain's rendered files as this process wrote or last read them, with the version of
   * its directory they are (see `refresh`): a join reads again only the domains another process
   * changed since, where it read every domain's nine files (90,000 to add a mailbox on a server
   * of 10,000 domains).
   */
  private readonly rendered = new Map<string, { files: DomainFiles; version: bigint | null }>();

  constructor(dataDir: string, options: { mapsDir?: string | null; relayPort?: number } = {}) {
    this.relayPort = options.relayPort ?? 25;
    this.dir = path.resolve(dataDir, 'rendered', 'mail');
    this.accountsDir = path.resolve(dataDir, 'accounts');
    this.mapsDir = path.resolve(options.mapsDir ?? this.dir);
  }

  /**
   * Writes `tls/mail.crt` and `tls/mail.key` (0600, in a 0700 directory) beside the maps, where
   * the submission service reads them; true when either changed.
   */
  async useCertificate(certificatePem: string, keyPem: string): Promise<boolean> {
    const dir = path.join(this.mapsDir, 'tls');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const [crt, key] = [path.join(dir, 'mail.crt'), path.join(dir, 'mail.key')];
    const same =
      (await readFile(crt, 'utf8').catch(() => '')) === certificatePem &&
      (await readFile(key, 'utf8').catch(() => '')) === keyPem;
    if (same) return false;
    // The key first: a reader never finds the new certificate beside the old key.
    await writeFileIfChanged(key, keyPem, 0o600);
    await writeFileIfChanged(crt, certificatePem, 0o644);
    return true;
  }

  async applyDomain(domain: MailDomainSpec): Promise<void> {
    // The signing key, for OpenDKIM alone: 0600 in a directory of its own.
    const keyFile = this.keyFile(domain.name);
    if (domain.dkim) {
      await mkdir(path.dirname(keyFile), { recursive: true, mode: 0o700 });
      await writeFileIfChanged(keyFile, domain.dkim.privateKeyPem, 0o600);
    } else await rm(keyFile, { force: true });
    const dkim = renderDkimTables(domain, keyFile);
    const files: DomainFiles = {
      'users.dict': renderAuthDict(domain),
      passwd: renderPasswdFile(domain),
      virtual_mailbox_maps: renderVirtualMailboxMap(domain, this.accountsDir),
      virtual_alias_maps: renderVirtualAliasMap(domain),
      sender_login_maps: renderSenderLoginMap(domain),
      recipient_access: renderRecipientAccess(domain),
      transport: renderTransport(domain, this.relayPort),
      dkim_key_table: dkim.keyTable,
      dkim_signing_table: dkim.signingTable,
    };
    await this.writeMailboxes(domain);
    const dir = this.domainDir(domain.name);
    await mkdir(dir, { recursive: true });
    // Each write is fsynced: side by side, not one after another (a mailbox's apply took 20–40 ms),
    // and the join beside them, as it reads none of them. A crash before all are written leaves
    // the unit unapplied, so it is applied again, whichever were.
    await Promise.all([
      ...MAPS.map((name) => writeIfChanged(path.join(dir, name), files[name])),
      this.join(path.basename(domain.name), files),
    ]);
  }

  async removeDomain(name: string, root: string, options: { keepMaps: boolean }): Promise<void> {
    await rm(root, MAILDIRS);
    if (options.keepMaps) return;
    await removeTree(this.domainDir(name));
    await rm(this.keyFile(name), { force: true });
    await this.join(path.basename(name), null);
  }

  /** Maildirs (cur/new/tmp) and autoresponder scripts; mailboxes no longer in the unit are removed with their mail. */
  private async writeMailboxes(domain: MailDomainSpec): Promise<void> {
    const wanted = new Set(domain.mailboxes.map((m) => m.id));
    const gone = (await readdir(domain.root).catch(() => [] as string[])).filter((entry) => !wanted.has(entry));
    // Side by side, a slice at a time: one after another, a domain's five mailboxes took 7 ms of its apply.
    await inSlices(gone, (entry) => rm(path.join(domain.root, entry), MAILDIRS));
    await inSlices(domain.mailboxes, async (m) => {
      const home = mailboxHome(domain, m);
      // The path down to the home stays traversable (the mail server's user walks it); the Maildir is private.
      await mkdir(home, { recursive: true });
      const sieve = path.join(home, '.dovecot.sieve');
      await Promise.all([
        ...['cur', 'new', 'tmp'].map((sub) => mkdir(path.join(home, 'Maildir', sub), { recursive: true, mode: 0o700 })),
        m.autoresponder
          ? writeIfChanged(sieve, renderAutoresponderSieve(m.address, m.autoresponder))
          : rm(sieve, { force: true }),
      ]);
    });
  }

  private keyFile(name: string): string {
    return path.join(this.mapsDir, 'dkim', `${path.basename(name)}.private`);
  }

  private domainDir(name: string): string {
    // Domain names are validated A-labels; basename() keeps any surprise inside the directory.
    return path.join(this.dir, 'domains', path.basename(name));
  }

  /** The files every domain's rendered files join into, with `name`'s now `files` (`null`: gone). */
  private join(name: string, files: DomainFiles | null): Promise<void> {
    return this.exclusive(async () => {
      await this.refresh(name);
      if (files) this.rendered.set(name, { files, version: null });
      else this.rendered.delete(name);
      const domains = [...this.rendered.keys()].sort();
      await mkdir(this.mapsDir, { recursive: true });
      await Promise.all([
        writeIfChanged(path.join(this.mapsDir, 'virtual_mailbox_domains'), domains.map((d) => `${d} OK\n`).join('')),
        ...MAPS.map((map) =>
          writeIfChanged(path.join(this.mapsDir, map), domains.map((d) => this.rendered.get(d)?.files[map] ?? '').join('')),
        ),
      ]);
    });
  }

  /**
   * The other domains' files as the disk holds them: read again where the domain's directory has
   * another modification time than when they were read (every write renames a file into it), or
   * had one too recent to tell a later change in the same clock tick from it (git's "racy"
   * entries; `null`). One `stat` per domain, and the reads of what another process applied.
   */
  private async refresh(except: string): Promise<void> {
    const domainsDir = path.join(this.dir, 'domains');
    const names = await readdir(domainsDir).catch(() => [] as string[]);
    const present = new Set(names);
    for (const name of this.rendered.keys()) if (!present.has(name)) this.rendered.delete(name);
    await inSlices(names, async (d) => {
      if (d === except) return;
      const tooRecent = BigInt(Date.now() - RACY_MS) * 1_000_000n;
      const mtime = (await stat(path.join(domainsDir, d), { bigint: true }).catch(() => null))?.mtimeNs ?? null;
      const known = this.rendered.get(d);
      if (known && mtime !== null && known.version === mtime) return;
      const contents = await Promise.all(MAPS.map((map) => readFile(path.join(domainsDir, d, map), 'utf8').catch(() => '')));
      const files = Object.fromEntries(MAPS.map((map, i) => [map, contents[i]])) as DomainFiles;
      this.rendered.set(d, { files, version: mtime !== null && mtime < tooRecent ? mtime : null });
    });
  }
}

/** How recent a directory's modification time may be and still name one version of it (a few clock ticks). */
const RACY_MS = 50;

// Password hashes are readable by the owner and the group only: the group is the mail server's
// when the operator gives the maps directory that group with the setgid bit (docs/Guides/real-daemons.md).
const HASHES = new Set(['passwd', 'users.dict']);
const writeIfChanged = (file: string, content: string) =>
  writeFileIfChanged(file, content, HASHES.has(path.basename(file)) ? 0o640 : 0o644);
