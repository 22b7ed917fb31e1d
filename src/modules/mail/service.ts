import type { Caller } from '../../auth/caller.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import type { PageParams } from '../../db/paging.js';
import type { JobQueue } from '../../jobs/queue.js';
import { parseDomainName } from '../../lib/domain-name.js';
import { conflict, invalid, notFound, quotaExceeded, type FieldError } from '../../lib/errors.js';
import { isId, newId } from '../../lib/ids.js';
import { checkVersion, staleVersion } from '../../lib/if-match.js';
import { generateMailPassword, hashMailPassword } from '../../lib/mail-password.js';
import { mergeFields } from '../../lib/merge-patch.js';
import * as accounts from '../accounts/index.js';
import { limitsOf, lockBelowLimit, writableAccount, type AccountHooks } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import * as domains from '../domains/index.js';
import type { DomainHooks } from '../domains/index.js';
import * as repo from './repo.js';
import { addressEvent, mailboxUsage, presentAddress, toForwarder, toMailbox } from './representation.js';
import {
  autoresponderErrors,
  destinationErrors,
  isFieldError,
  normalizeAutoresponder,
  parseAddress,
  passwordErrors,
  type ParsedAddress,
} from './rules.js';
import type {
  CreateForwarder,
  CreateMailbox,
  Forwarder,
  ForwarderPatch,
  Mailbox,
  MailboxPatch,
  MailboxWithPassword,
} from './schemas.js';
import { touchMailUnit, touchMailUnitsOfAccount } from './unit.js';

const MIB = 1024 * 1024;
const NOUN = { mailbox: 'mailbox', forwarder: 'forwarder' } as const;

/** Mailboxes (`/v1/emails`) and forwarders (`/v1/email-forwarders`): addresses of a mail-enabled domain. */
export function mailService(deps: ServiceDeps) {
  const { db, config, jobs } = deps;

  async function load(caller: Caller, kind: repo.AddressKind, id: string): Promise<repo.AddressRow> {
    const row = isId(kind === 'mailbox' ? 'eml' : 'fwd', id) ? await repo.findAddress(db, caller, kind, id) : undefined;
    if (!row) throw notFound(NOUN[kind]);
    return row;
  }

  /** A new address: its domain in the caller's reach (else 404) with mail enabled (else 409). */
  async function newAddress(caller: Caller, raw: string) {
    const parsed = parseAddress(raw, '/address');
    if (isFieldError(parsed)) throw invalid([parsed]);
    const domain = await domains.findDomain(db, caller, { name: parsed.domain });
    if (!domain) throw notFound('domain');
    const account = await writableAccount(db, caller, domain.account_id);
    if (!domain.mail_enabled) {
      throw conflict('invalid_state', `Mail is not enabled on ${domain.name}; set mail_enabled on the domain first.`);
    }
    return { parsed, domain, account };
  }

  /** Bytes the account may still use: its disk quota less what its files take now. */
  async function remainingDisk(account: accounts.AccountRow): Promise<{ allowed: number; used: number }> {
    return {
      allowed: limitsOf(account).disk_quota_mb * MIB,
      used: await deps.diskInUse(account.id),
    };
  }

  /**
   * A mailbox quota must fit the plan's per-mailbox maximum and, where it grows, the account's
   * remaining disk (a mailbox may fill its quota, less what it already holds).
   */
  async function checkQuota(
    account: accounts.AccountRow,
    quotaMb: number,
    from: { quotaMb: number; usage: number } | null,
    measured?: { allowed: number; used: number },
  ) {
    const max = limitsOf(account).max_email_quota_mb;
    if (quotaMb > max) throw quotaExceeded([{ limit: 'max_email_quota_mb', allowed: max, usage: quotaMb }]);
    if (from && quotaMb <= from.quotaMb) return;
    const disk = measured ?? (await remainingDisk(account));
    const growth = quotaMb * MIB - (from?.usage ?? 0);
    if (growth > disk.allowed - disk.used) {
      throw quotaExceeded(
        [{ limit: 'disk_quota_mb', allowed: disk.allowed, usage: disk.used + growth }],
        `A ${quotaMb} MB mailbox does not fit the account's remaining disk (${Math.max(0, disk.allowed - disk.used)} bytes).`,
      );
    }
  }

  /** Inserts under the account's and the domain's row locks, so limits and mail_enabled hold at commit. */
  async function insert(
    kind: repo.AddressKind,
    target: { parsed: ParsedAddress; domain: domains.DomainRow; account: accounts.AccountRow },
    fields: repo.AddressFields,
  ): Promise<repo.AddressRow> {
    const id = newId(kind === 'mailbox' ? 'eml' : 'fwd');
    try {
      return await db.transaction(async (tx) => {
        const account =
          kind === 'mailbox'
            ? await lockBelowLimit(tx, target.account.id, 'max_email_accounts', repo.countMailboxes)
            : target.account;
        const domain = await domains.findDomainById(tx, target.domain.id, true);
        if (!domain) throw notFound('domain');
        if (!domain.mail_enabled) throw conflict('invalid_state', `Mail is not enabled on ${domain.name}.`);
        await repo.insertAddress(tx, {
          id,
          kind,
          domain_id: domain.id,
          account_id: account.id,
          address: target.parsed.address,
          ...fields,
        });
        const row = (await repo.findAddressById(tx, id)) as repo.AddressRow;
        await touchMailUnit(tx, jobs, domain);
        await addressEvent(tx, 'created', row, kind === 'mailbox' ? toMailbox(row, 0) : toForwarder(row));
        return row;
      });
    } catch (err) {
      if (isUniqueViolation(err, 'mail_addresses_address_key'))
        throw conflict('already_exists', `The address ${target.parsed.address} already exists.`);
      if (isForeignKeyViolation(err)) throw notFound('domain');
      throw err;
    }
  }

  /** Writes new fields at the version read (412 if another writer moved it on), with the unit and the event. */
  async function write(current: repo.AddressRow, fields: repo.AddressFields): Promise<repo.AddressRow> {
    return db.transaction(async (tx) => {
      if (!(await repo.updateAddress(tx, current.id, current.version, fields))) throw staleVersion();
      const row = (await repo.findAddressById(tx, current.id)) as repo.AddressRow;
      await touchMailUnit(tx, jobs, { id: row.domain_id, name: row.domain_name, account_id: row.account_id });
      await addressEvent(tx, 'updated', row, await presentAddress(config.dataDir, row));
      return row;
    });
  }

  async function remove(caller: Caller, kind: repo.AddressKind, id: string, expectedVersion?: number): Promise<void> {
    const current = await load(caller, kind, id);
    await writableAccount(db, caller, current.account_id);
    checkVersion(expectedVersion, current.version);
    if ((await domains.findDomainById(db, current.domain_id))?.catch_all === current.address)
      throw conflict('in_use', `${current.address} is the catch-all of ${current.domain_name}; change the catch-all first.`);
    const data = await presentAddress(config.dataDir, current);
    await db.transaction(async (tx) => {
      await repo.deleteAddress(tx, current.id);
      await touchMailUnit(tx, jobs, { id: current.domain_id, name: current.domain_name, account_id: current.account_id });
      await addressEvent(tx, 'deleted', current, data);
    });
  }

  const password = async (p: { password?: string; generate_password?: boolean }, address: string) => {
    if (p.password !== undefined && p.generate_password) {
      throw invalid([
        { pointer: '/generate_password', code: 'conflicting', detail: 'give either password or generate_password' },
      ]);
    }
    const plain = p.generate_password ? generateMailPassword() : p.password;
    if (plain === undefined) return null;
    const errors = passwordErrors(plain, address);
    if (errors.length) throw invalid(errors);
    return { plain, generated: p.generate_password === true, hash: await hashMailPassword(plain, config.mailHash) };
  };

  // A `domain` filter that is no domain name matches nothing: a reserved name stands for it
  // (special-use TLDs are never hosted), so the query keeps one shape.
  const listFilter = (f: repo.AddressFilter): repo.AddressFilter => {
    if (!f.domain || isId('dom', f.domain)) return f;
    const name = parseDomainName(f.domain);
    return { ...f, domain: name.ok ? name.ascii : 'no-such-domain.invalid' };
  };

  return {
    loadMailbox: (caller: Caller, id: string) => load(caller, 'mailbox', id),
    loadForwarder: (caller: Caller, id: string) => load(caller, 'forwarder', id),

    async getMailbox(caller: Caller, id: string): Promise<Mailbox> {
      const row = await load(caller, 'mailbox', id);
      return toMailbox(row, await mailboxUsage(config.dataDir, row));
    },

    async listMailboxes(caller: Caller, filter: repo.AddressFilter, page: PageParams): Promise<Mailbox[]> {
      const rows = await repo.listAddresses(db, caller, 'mailbox', listFilter(filter), page);
      return Promise.all(rows.map(async (r) => toMailbox(r, await mailboxUsage(config.dataDir, r))));
    },

    /** 201; a generated password is in this response only. */
    async createMailbox(caller: Caller, input: CreateMailbox): Promise<MailboxWithPassword> {
      const target = await newAddress(caller, input.address);
      const address = target.parsed.address;
      const errors: FieldError[] = [];
      if (input.password === undefined && !input.generate_password)
        errors.push({ pointer: '/password', code: 'required', detail: 'give a password or generate_password: true' });
      const forward = destinationErrors(input.forward_to ?? [], address, '/forward_to');
      const autoresponder = normalizeAutoresponder(input.autoresponder ?? {});
      errors.push(...forward.errors, ...autoresponderErrors(autoresponder));
      if (errors.length) throw invalid(errors);
      const disk = await remainingDisk(target.account);
      // Without quota_mb: the plan's maximum, or what is left of the account's disk if less (at least 1).
      const fitting = Math.min(limitsOf(target.account).max_email_quota_mb, Math.floor((disk.allowed - disk.used) / MIB));
      const quotaMb = input.quota_mb ?? Math.max(fitting, 1);
      await checkQuota(target.account, quotaMb, null, disk);
      // Hashed last: a request refused by the checks above costs no argon2 work.
      const secret = (await password(input, address)) as NonNullable<Awaited<ReturnType<typeof password>>>;
      const row = await insert('mailbox', target, {
        password_hash: secret.hash,
        quota_mb: quotaMb,
        status: 'active',
        forward_to: forward.destinations,
        autoresponder,
      });
      const mailbox = toMailbox(row, 0);
      return secret.generated ? { ...mailbox, password: secret.plain } : mailbox;
    },

    /** PUT and PATCH. A new password replaces the old one on the mail server at the next apply. */
    async updateMailbox(caller: Caller, id: string, patch: MailboxPatch, expectedVersion?: number): Promise<MailboxWithPassword> {
      const current = await load(caller, 'mailbox', id);
      const account = await writableAccount(db, caller, current.account_id);
      checkVersion(expectedVersion, current.version);
      const { password: newPassword, generate_password: generate, ...fields } = patch;
      const next = mergeFields(
        {
          quota_mb: current.quota_mb as number,
          status: current.status,
          forward_to: current.forward_to,
          autoresponder: current.autoresponder ?? normalizeAutoresponder({}),
        },
        fields,
      );
      const forward = destinationErrors(next.forward_to, current.address, '/forward_to');
      const autoresponder = normalizeAutoresponder(next.autoresponder);
      const errors = [...forward.errors, ...autoresponderErrors(autoresponder)];
      if (errors.length) throw invalid(errors);
      const usage = await mailboxUsage(config.dataDir, current);
      await checkQuota(account, next.quota_mb, { quotaMb: current.quota_mb as number, usage });
      const secret = await password({ password: newPassword, generate_password: generate }, current.address);
      const row = await write(current, {
        password_hash: secret?.hash ?? current.password_hash,
        quota_mb: next.quota_mb,
        status: next.status,
        forward_to: forward.destinations,
        autoresponder,
      });
      const mailbox = toMailbox(row, usage);
      return secret?.generated ? { ...mailbox, password: secret.plain } : mailbox;
    },

    removeMailbox: (caller: Caller, id: string, expectedVersion?: number) => remove(caller, 'mailbox', id, expectedVersion),

    async getForwarder(caller: Caller, id: string): Promise<Forwarder> {
      return toForwarder(await load(caller, 'forwarder', id));
    },

    async listForwarders(caller: Caller, filter: repo.AddressFilter, page: PageParams): Promise<Forwarder[]> {
      return (await repo.listAddresses(db, caller, 'forwarder', listFilter(filter), page)).map(toForwarder);
    },

    async createForwarder(caller: Caller, input: CreateForwarder): Promise<Forwarder> {
      const target = await newAddress(caller, input.address);
      const { destinations, errors } = destinationErrors(input.destinations, target.parsed.address, '/destinations');
      if (errors.length) throw invalid(errors);
      const fields = {
        password_hash: null,
        quota_mb: null,
        status: 'active' as const,
        forward_to: destinations,
        autoresponder: null,
      };
      return toForwarder(await insert('forwarder', target, fields));
    },

    async updateForwarder(caller: Caller, id: string, patch: ForwarderPatch, expectedVersion?: number): Promise<Forwarder> {
      const current = await load(caller, 'forwarder', id);
      await writableAccount(db, caller, current.account_id);
      checkVersion(expectedVersion, current.version);
      const { destinations, errors } = destinationErrors(
        patch.destinations ?? current.forward_to,
        current.address,
        '/destinations',
      );
      if (errors.length) throw invalid(errors);
      return toForwarder(await write(current, { ...current, forward_to: destinations }));
    },

    removeForwarder: (caller: Caller, id: string, expectedVersion?: number) => remove(caller, 'forwarder', id, expectedVersion),
  };
}
export type MailService = ReturnType<typeof mailService>;

/** Mailboxes count against the account's usage and max_email_accounts. */
const mailboxCounter = accounts.counterOf('email_accounts', repo.mailboxCounts);

/** A suspended (or unsuspended) account's mailboxes refuse (or accept) logins: their units render again. */
export const mailAccountHooks = (jobs: JobQueue): Partial<AccountHooks> => ({
  counters: [mailboxCounter],
  statusChanged: [(tx, accountId) => touchMailUnitsOfAccount(tx, jobs, accountId)],
});

/** A domain's mail addresses hold it; its mail unit renders again when its mail or status changes. */
export const mailDomainHooks = (jobs: JobQueue, dataDir: string): DomainHooks['mail'] => ({
  scope: 'emails:write',
  holders: async (tx, domain) =>
    (await repo.addressesOfDomain(tx, domain.id)).map((a) => ({
      type: a.kind === 'mailbox' ? 'email' : 'email_forwarder',
      id: a.id,
      address: a.address,
    })),
  // The rows go with the domain (foreign key); each address announces its deletion.
  release: async (tx, domain) => {
    for (const a of await repo.addressesOfDomain(tx, domain.id))
      await addressEvent(tx, 'deleted', a, await presentAddress(dataDir, a));
  },
  changed: (tx, domain) => touchMailUnit(tx, jobs, domain),
  hasAddress: async (tx, domain, address) => (await repo.findAddressByName(tx, address))?.domain_id === domain.id,
});
