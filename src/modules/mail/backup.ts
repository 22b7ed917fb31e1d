import { createWriteStream } from 'node:fs';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Listing } from '../../archives/listing.js';
import { archiveStream } from '../../archives/pack.js';
import { systemCaller } from '../../auth/caller.js';
import {
  type BackupPart,
  type Copied,
  type MoveCopy,
  type PartServers,
  RestoreRefused,
  type StagedPart,
} from '../../contribution.js';
import { mailRoot } from '../../layout.js';
import { exists } from '../../lib/disk.js';
import { removeTree } from '../../lib/remove-tree.js';
import { findAccountById, transferLimit } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import * as domains from '../domains/index.js';
import {
  AgentTaskFailed,
  copyFromServer,
  discardCopy,
  LOCAL_SERVER_ID,
  type RelayTo,
  runAgentTask,
  sendCopy,
  sentAheadTo,
} from '../servers/index.js';
import { withMailDomain } from './reconciler.js';
import * as repo from './repo.js';
import { addressEvent, presentAddress } from './representation.js';
import type { Forwarder, Mailbox } from './schemas.js';
import { touchMailUnit } from './unit.js';

/** The archive's file of mailbox password hashes (0600): what a restore needs to bring the logins back. */
const CREDENTIALS = 'mail-credentials.json';
const ALL = { limit: 1_000_000, afterId: null };
/** A move's copy of the maildirs has been sent to the mail server it moves to (at least begun). */
const sendingFile = (listings: string) => path.join(listings, 'mail.sending');
/** What the mail server the account moves to holds of the maildirs' copy, as last sent (send-copy.ts). */
const sentFile = (listings: string) => path.join(listings, 'mail.sent.json');
/** The final copy of the maildirs is on the mail server the account moves to: landing puts it in place there. */
const landingFile = (staging: string) => path.join(staging, 'mail.landing');

/** What a backup's manifest holds of an account's mail (the API's names). */
interface MailManifest {
  emails?: Mailbox[];
  email_forwarders?: Forwarder[];
}

/**
 * Mail in backups: each mailbox and forwarder as the API shows it, the mailboxes' password
 * hashes, and each mail domain's Maildirs (packed by the mail server's agent when the account's
 * mail is on another server). A restore puts each address back as the backup holds it (its id,
 * its password hash, its messages), re-creating what is gone.
 */
export function mailBackupPart(deps: ServiceDeps): BackupPart {
  const { db, config, jobs } = deps;
  const caller = systemCaller('backup');

  /** The address's domain, which must be the account's, and the address that holds it now, if any. */
  async function target(accountId: string, want: { id: string; address: string }) {
    const domainName = want.address.split('@')[1] as string;
    const domain = await domains.findDomain(db, caller, { name: domainName });
    if (!domain || domain.account_id !== accountId)
      throw new RestoreRefused('domain_missing', `${domainName} is not a domain of the account; restore dns with it.`);
    const current = (await repo.findAddressById(db, want.id)) ?? (await repo.findAddressByName(db, want.address));
    return { domain, domainName, current, id: current?.id ?? want.id };
  }

  const mailServerOf = async (accountId: string) => (await findAccountById(db, accountId))?.mail_server_id ?? LOCAL_SERVER_ID;

  /**
   * The account's maildirs on its mail server, packed there by its agent and streamed into the
   * staging (`mail/<domain>/<mailbox id>`); what arrives is bounded by twice the account's disk quota.
   */
  async function packedOnServer(
    serverId: string,
    accountId: string,
    names: string[],
    staging: string,
    copy?: MoveCopy,
  ): Promise<Listing | null> {
    const task = { action: 'mail.pack' as const, account_id: accountId, domains: names };
    return copyFromServer(deps, serverId, task, path.join(staging, 'mail'), {
      maxBytes: transferLimit(await findAccountById(db, accountId)),
      keep: copy && { listingFile: path.join(copy.listings, 'mail.json'), verify: copy.final },
      relay: copy && (await relayTo(accountId, copy)),
    });
  }

  /**
   * Where a move's copy of the maildirs is relayed as it is fetched whole (copies.ts), if it goes
   * on to another server; that server is marked as sent to first, so a roll back discards there.
   */
  async function relayTo(accountId: string, copy: MoveCopy): Promise<RelayTo | undefined> {
    const serverId = sentAheadTo(copy.to, 'mail');
    if (!serverId) return undefined;
    await writeFile(sendingFile(copy.listings), serverId, { mode: 0o600 });
    return { serverId, task: { action: 'mail.receive', account_id: accountId }, sentFile: sentFile(copy.listings) };
  }

  /**
   * The backup's messages put back on the account's mail server, each into the mailbox that holds
   * its address now, after the rows: every unit its agent applies from then on has the mailbox,
   * so none takes the messages away. The domains are applied once more, which gives the files to
   * the mail server's user.
   */
  async function unpackedOnServer(
    serverId: string,
    accountId: string,
    mailboxes: Pick<Mailbox, 'id' | 'address'>[],
    staging: string,
    sentAhead = false,
  ): Promise<void> {
    const dirs = [];
    const placed = [];
    const touched = new Map<string, domains.DomainRow>();
    for (const m of mailboxes) {
      const { domain, domainName, id } = await target(accountId, m);
      touched.set(domain.id, domain);
      placed.push({ domain: domainName, id });
      const dir = path.join(staging, 'mail', domainName, m.id);
      if (await exists(dir)) dirs.push({ dir, as: `${domainName}/${id}` });
    }
    if (!placed.length) return;
    const task = { action: 'mail.unpack' as const, account_id: accountId, mailboxes: placed };
    // What the server holds already (a move's copy sent ahead), else sent now; it holds the same.
    // A server away fails the step either way: the messages are packed only for one that answers.
    const inPlace =
      sentAhead &&
      (await runAgentTask(db, deps.clock, serverId, { ...task, staged: true }).then(
        () => true,
        (err: unknown) => {
          if (err instanceof AgentTaskFailed) return false;
          throw err;
        },
      ));
    if (!inPlace) {
      const file = path.join(staging, '.mail-restore.tar.gz');
      try {
        await pipeline(archiveStream(staging, dirs), createWriteStream(file, { mode: 0o600 }));
        await runAgentTask(db, deps.clock, serverId, task, { file });
      } finally {
        await rm(file, { force: true });
      }
    }
    await db.transaction(async (tx) => {
      for (const domain of touched.values()) await touchMailUnit(tx, jobs, domain);
    });
  }

  /** An address as the backup holds it; a mailbox's messages first, copied from `staging` when the mail is here. */
  /**
   * A mailbox's directory replaced by the copy in `from` (none: emptied). While no apply of its
   * domain runs: one (for another mailbox of the domain) would create Maildir folders in it while
   * it is being removed.
   */
  const putMailboxBack = (domainId: string, from: string, to: string) =>
    withMailDomain(db, domainId, async () => {
      await removeTree(to);
      if (await exists(from)) await copyMailbox(from, to);
    });

  async function putBack(
    accountId: string,
    want: { id: string; kind: repo.AddressKind; address: string; fields: repo.AddressFields },
    staging: string | null,
  ): Promise<void> {
    const { domain, domainName, current, id } = await target(accountId, want);
    if (want.kind === 'mailbox' && staging) {
      // The messages first, so the mail server never sees the mailbox without them.
      await putMailboxBack(
        domain.id,
        path.join(staging, 'mail', domainName, want.id),
        path.join(mailRoot(config.dataDir, accountId, domainName), id),
      );
    }
    // A mailbox the backup holds no hash for keeps the password it has now.
    const fields =
      want.kind === 'mailbox'
        ? { ...want.fields, password_hash: want.fields.password_hash ?? current?.password_hash ?? null }
        : want.fields;
    await db.transaction(async (tx) => {
      if (current) await repo.updateAddress(tx, current.id, current.version, fields);
      else
        await repo.insertAddress(tx, {
          id,
          kind: want.kind,
          domain_id: domain.id,
          account_id: domain.account_id,
          address: want.address,
          ...fields,
        });
      const row = (await repo.findAddressById(tx, id)) as repo.AddressRow;
      await addressEvent(tx, current ? 'updated' : 'created', row, await presentAddress(config.dataDir, row));
      await touchMailUnit(tx, jobs, domain);
    });
  }

  return {
    name: 'emails',
    role: 'mail',

    async stage(accountId: string, staging: string, from?: PartServers, copy?: MoveCopy): Promise<StagedPart> {
      const filter = { account_id: accountId };
      const mailboxes = await repo.listAddresses(db, caller, 'mailbox', filter, ALL);
      const forwarders = await repo.listAddresses(db, caller, 'forwarder', filter, ALL);
      // Hashes, never passwords.
      await writeFile(
        path.join(staging, CREDENTIALS),
        JSON.stringify(Object.fromEntries(mailboxes.map((r) => [r.id, r.password_hash]))),
        { mode: 0o600 },
      );
      const names = [...new Set(mailboxes.map((r) => r.domain_name))];
      const server = from?.mail ?? (await mailServerOf(accountId));
      const dirs = [];
      const copied: Copied = {};
      // No mail domain with a mailbox: nothing to pack there (an archive of nothing is no archive).
      if (server !== LOCAL_SERVER_ID) {
        const held = names.length ? await packedOnServer(server, accountId, names, staging, copy) : null;
        if (held) copied.mail = held;
      } else
        for (const name of names) {
          const dir = mailRoot(config.dataDir, accountId, name);
          if (await exists(dir)) dirs.push({ dir, as: `mail/${name}` });
        }
      const manifest: MailManifest = {
        emails: (await Promise.all(mailboxes.map((r) => presentAddress(config.dataDir, r)))) as Mailbox[],
        email_forwarders: (await Promise.all(forwarders.map((r) => presentAddress(config.dataDir, r)))) as Forwarder[],
      };
      const contents = { emails: mailboxes.length, email_forwarders: forwarders.length };
      return { manifest: { ...manifest }, dirs, contents, copied };
    },

    async restore(accountId: string, manifest: MailManifest, staging: string): Promise<void> {
      const server = await mailServerOf(accountId);
      const copy = server === LOCAL_SERVER_ID;
      const hashes = JSON.parse(await readFile(path.join(staging, CREDENTIALS), 'utf8').catch(() => '{}')) as Record<
        string,
        string
      >;
      for (const m of manifest.emails ?? []) {
        const fields = {
          password_hash: hashes[m.id] ?? null,
          quota_mb: m.quota_mb,
          status: m.status,
          forward_to: m.forward_to,
          autoresponder: m.autoresponder,
        };
        await putBack(accountId, { id: m.id, kind: 'mailbox', address: m.address, fields }, copy ? staging : null);
      }
      for (const f of manifest.email_forwarders ?? []) {
        const fields = {
          password_hash: null,
          quota_mb: null,
          status: 'active' as const,
          forward_to: f.destinations,
          autoresponder: null,
        };
        await putBack(accountId, { id: f.id, kind: 'forwarder', address: f.address, fields }, null);
      }
      if (!copy) await unpackedOnServer(server, accountId, manifest.emails ?? [], staging);
    },

    async land(accountId: string, staging: string): Promise<void> {
      const mailboxes = await repo.listAddresses(db, caller, 'mailbox', { account_id: accountId }, ALL);
      const server = await mailServerOf(accountId);
      if (server !== LOCAL_SERVER_ID)
        return unpackedOnServer(server, accountId, mailboxes, staging, await exists(landingFile(staging)));
      const touched = new Map<string, domains.DomainRow>();
      for (const m of mailboxes) {
        const { domain, domainName } = await target(accountId, m);
        touched.set(domain.id, domain);
        await putMailboxBack(
          domain.id,
          path.join(staging, 'mail', domainName, m.id),
          path.join(mailRoot(config.dataDir, accountId, domainName), m.id),
        );
      }
      // Applied again: the mail server's user gets the files.
      await db.transaction(async (tx) => {
        for (const domain of touched.values()) await touchMailUnit(tx, jobs, domain);
      });
    },

    async sendAhead(accountId: string, staging: string, copy: MoveCopy, copied?: Copied): Promise<void> {
      const server = sentAheadTo(copy.to, 'mail');
      const files = path.join(staging, 'mail');
      if (!server || !(await exists(files))) return;
      await writeFile(sendingFile(copy.listings), server, { mode: 0o600 });
      const task = { action: 'mail.receive' as const, account_id: accountId };
      await sendCopy(deps, server, task, files, sentFile(copy.listings), copied?.mail);
      if (copy.final) await writeFile(landingFile(staging), '', { mode: 0o600 });
    },

    async discardAhead(accountId: string, copy: MoveCopy): Promise<void> {
      const server = sentAheadTo(copy.to, 'mail');
      if (!server || !(await exists(sendingFile(copy.listings)))) return;
      await discardCopy(deps, server, { action: 'mail.discard', account_id: accountId });
    },
  };
}

/**
 * Copies a mailbox's files into place. A mail apply running at the same time (an earlier change
 * of the domain) may re-create the empty Maildir between the removal and the copy, which makes
 * `cp` fail with EEXIST on that directory; the copy then merges into it.
 */
async function copyMailbox(from: string, to: string): Promise<void> {
  const options = { recursive: true, verbatimSymlinks: true } as const;
  await cp(from, to, options).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
    await cp(from, to, { ...options, force: true });
  });
}
