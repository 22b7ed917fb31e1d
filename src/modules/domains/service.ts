import { type Caller, requireKind, requireScope, requireWritable } from '../../auth/caller.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { PageParams } from '../../db/paging.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import { asciiName, parseDomainName } from '../../lib/domain-name.js';
import { conflict, invalid, notFound } from '../../lib/errors.js';
import { isId, newId } from '../../lib/ids.js';
import { checkVersion } from '../../lib/if-match.js';
import { mergeFields } from '../../lib/merge-patch.js';
import { seal } from '../../lib/sealed.js';
import { nextSerial } from '../../lib/soa-serial.js';
import { renderZoneFile } from '../../provisioning/render/zone-file.js';
import * as accounts from '../accounts/index.js';
import { lockBelowLimit, writableAccount, type AccountHooks } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { LOCAL_SERVER_ID } from '../servers/index.js';
import type { DomainDependent, DomainHooks, UsedBy } from './hooks.js';
import {
  bothEdits,
  dkimRecordContent,
  dkimRecordName,
  dmarcRecordContent,
  mailAuthEdit,
  newDkimKeyPair,
  newSelector,
  normalizeRua,
  RETIRED_KEY_DAYS,
  type DkimKey,
} from './mail-auth/records.js';
import * as dkim from './mail-auth/repo.js';
import * as records from './records/repo.js';
import type { DnsRecord } from './records/schemas.js';
import * as repo from './repo.js';
import { toDomain, toRecord } from './representation.js';
import type { CreateDomain, Domain, DomainDkim, DomainListQuery, DomainPatch } from './schemas.js';
import { publishZoneChange } from './zone/change.js';
import { zoneEditor } from './zone/edit.js';
import { mailRecordsEdit } from './zone/mail-records.js';
import { serverAddresses } from './zone/server-records.js';
import { initialRecords, mailRecords, type ZoneDefaults } from './zone/template.js';

/** 409 `in_use`, naming what holds the domain. */
const inUse = (name: string, usedBy: UsedBy[]) =>
  conflict('in_use', `Sites, mailboxes or forwarders still use ${name}; delete them first or pass cascade=true.`, {
    used_by: usedBy,
  });

/** `{domain}` in a path is an id or a name (A-label or Unicode); anything else matches nothing. */
function domainRef(ref: string): { id?: string; name?: string } {
  if (isId('dom', ref)) return { id: ref };
  const parsed = parseDomainName(ref);
  return parsed.ok ? { name: parsed.ascii } : {};
}

export function domainsService(deps: ServiceDeps, hooks: DomainHooks) {
  const { db, clock, config } = deps;
  const zone = { nameservers: config.nameservers, mailHost: config.mailHost };
  const present = (r: repo.CountedDomainRow) => toDomain(r, zone.nameservers);

  /**
   * The template's addresses for an account: its web server's (the configured ones for the local
   * server, until set through the API). Mail on the local server goes to the provider's mail
   * host, or `mail.<domain>` at the local addresses; on another server, to `mail.<domain>` at that server's.
   */
  async function zoneFor(account: accounts.AccountRow): Promise<ZoneDefaults> {
    const web = await serverAddresses(deps, account.web_server_id);
    const withWeb = { ...zone, webIpv4: web.ipv4, webIpv6: web.ipv6 };
    if (account.mail_server_id === LOCAL_SERVER_ID)
      return account.web_server_id === LOCAL_SERVER_ID
        ? withWeb
        : { ...withWeb, mailAddresses: await serverAddresses(deps, LOCAL_SERVER_ID) };
    return { ...withWeb, mailHost: null, mailAddresses: await serverAddresses(deps, account.mail_server_id) };
  }

  /** `{domain}` in the caller's reach, or 404. */
  async function found<T>(ref: string, find: (where: repo.DomainRef) => Promise<T | undefined>): Promise<T> {
    const where = domainRef(ref);
    const row = where.id || where.name ? await find(where) : undefined;
    if (!row) throw notFound('domain');
    return row;
  }
  const load = (caller: Caller, ref: string) => found(ref, (where) => repo.findDomain(db, caller, where));

  const editZone = zoneEditor(deps);
  // DKIM private keys are sealed with this before they reach the database.
  const sealKey = dkim.dkimSealKey(config);

  /** A new signing key, made before any transaction (RSA generation takes a while). */
  async function newKey(domainId: string, taken: string[]) {
    const pair = await newDkimKeyPair();
    const selector = newSelector(clock.now(), taken);
    return {
      domain_id: domainId,
      selector,
      public_key: pair.publicKey,
      private_key_sealed: seal(pair.privateKeyPem, sealKey),
    };
  }
  const dmarcOf = (d: Pick<repo.DomainRow, 'dmarc_policy' | 'dmarc_rua'>) => ({ policy: d.dmarc_policy, rua: d.dmarc_rua });

  return {
    load,
    async get(caller: Caller, ref: string): Promise<Domain> {
      return present(await found(ref, (where) => repo.findCountedDomain(db, caller, where)));
    },

    async list(caller: Caller, filter: DomainListQuery, page: PageParams): Promise<Domain[]> {
      const name = filter.name ? parseDomainName(filter.name) : null;
      if (name && !name.ok) return []; // no domain is hosted under a name that is no domain name
      const f = name ? { ...filter, name: name.ascii } : filter;
      return (await repo.listDomains(db, caller, f, page)).map(present);
    },

    async create(caller: Caller, input: CreateDomain): Promise<Domain> {
      const parsed = parseDomainName(input.name);
      if (!parsed.ok) throw invalid([{ pointer: '/name', code: parsed.problem, detail: parsed.detail }]);
      const account = await writableAccount(db, caller, input.account_id);
      const id = newId('dom');
      const defaults = await zoneFor(account);
      const mailOn = input.mail_enabled ?? false;
      const key = mailOn ? await newKey(id, []) : null;
      try {
        const row = await db.transaction(async (tx) => {
          await lockBelowLimit(tx, account.id, 'max_domains', repo.countDomains);
          await repo.lockDomainTree(tx, parsed.ascii);
          // A zone inside another tenant's domain (or over one of its sub-domains) would let its
          // owner answer for names it does not hold; the other tenant is not named.
          if (await repo.overlapsOtherAccount(tx, parsed.ascii, account.id))
            throw conflict('domain_unavailable', `${parsed.ascii} lies inside or above a domain hosted for another account.`);
          const serial = nextSerial(null, clock.now());
          const mail = input.mail_enabled ?? false;
          await repo.insertDomain(tx, {
            id,
            account_id: account.id,
            name: parsed.ascii,
            unicode_name: parsed.unicode,
            mail_enabled: mail,
            serial,
          });
          const initial = initialRecords(parsed.ascii, defaults, serial, input.template ?? 'default', mail);
          if (key) {
            // Mail that providers accept: the DKIM key's public part and a DMARC policy (p=none).
            const managed = (name: string, content: string) => ({
              id: newId('rec'),
              name,
              type: 'TXT',
              ttl: 3600,
              content,
              managed: true,
              template: false,
            });
            initial.push(managed(dkimRecordName(key.selector), dkimRecordContent(key)));
            initial.push(managed('_dmarc', dmarcRecordContent({ policy: 'none', rua: null })));
          }
          await records.insertRecords(tx, id, initial);
          if (key) await dkim.insertKey(tx, key);
          const created = (await repo.findCountedDomainById(tx, id)) as repo.CountedDomainRow;
          await publishZoneChange(deps, tx, created, 'domain.created', { created: initial.length, updated: 0, deleted: 0 });
          return created;
        });
        return present(row);
      } catch (err) {
        if (isUniqueViolation(err, 'domains_name_key'))
          throw conflict('already_exists', `The domain ${parsed.ascii} is already hosted here.`);
        throw err;
      }
    },

    /**
     * mail_enabled adds or removes the mail records (MX, SPF, the DKIM key and DMARC policy);
     * `dmarc` rewrites the `_dmarc` record; status is the operator's or reseller's. One serial bump.
     */
    async update(caller: Caller, ref: string, patch: DomainPatch, expectedVersion?: number): Promise<Domain> {
      const current = await load(caller, ref);
      const account = (await accounts.findAccountById(db, current.account_id)) as accounts.AccountRow;
      requireWritable(caller, account);
      checkVersion(expectedVersion, current.version);
      if (patch.status !== undefined && patch.status !== current.status)
        requireKind(caller, ['operator', 'reseller'], 'suspend domains');
      const { dmarc: dmarcPatch, ...rest } = patch;
      const merged = mergeFields(
        { mail_enabled: current.mail_enabled, status: current.status, dmarc: dmarcOf(current), catch_all: current.catch_all },
        {
          ...rest,
          ...(dmarcPatch ? { dmarc: dmarcPatch } : {}),
        },
      );
      const catchAll = merged.catch_all === null ? null : merged.catch_all.toLowerCase();
      const catchAllChanges = catchAll !== current.catch_all;
      if (catchAll !== null && !catchAll.endsWith(`@${current.name}`))
        throw invalid([{ pointer: '/catch_all', code: 'outside_domain', detail: `must be an address @${current.name}` }]);
      if (catchAllChanges && catchAll !== null && !merged.mail_enabled)
        throw conflict('invalid_state', `Mail is not enabled on ${current.name}.`);
      // A member a merge patch removed is none, as null is.
      const given = merged.dmarc.rua ?? null;
      const rua = given === null ? null : normalizeRua(given);
      if (given !== null && rua === null)
        throw invalid([
          {
            pointer: '/dmarc/rua',
            code: 'invalid_address',
            detail: 'must be addresses (or mailto: URIs) to send DMARC reports to, at most 5, comma-separated',
          },
        ]);
      const dmarc = { policy: merged.dmarc.policy, rua };
      const dmarcChanges = dmarc.policy !== current.dmarc_policy || dmarc.rua !== current.dmarc_rua;
      if (dmarcChanges && !merged.mail_enabled)
        throw conflict('invalid_state', `Mail is not enabled on ${current.name}; DMARC is published with mail.`);
      const next: repo.DomainFields = {
        mail_enabled: merged.mail_enabled,
        status: merged.status,
        dmarc_policy: dmarc.policy,
        dmarc_rua: dmarc.rua,
        // Mail off: nothing is delivered, so no catch-all either.
        catch_all: merged.mail_enabled ? catchAll : null,
      };

      const mailChanges = next.mail_enabled !== current.mail_enabled;
      // Keys to publish: a new one when mail turns on, none when it turns off, else those published.
      const key = mailChanges && next.mail_enabled ? await newKey(current.id, await dkim.selectorsOf(db, current.id)) : null;
      // (Read only when the managed mail records are rewritten: a status change needs none.)
      const mailWanted = mailChanges ? mailRecords(current.name, await zoneFor(account)) : null;
      const keys: DkimKey[] =
        !next.mail_enabled || !(mailChanges || dmarcChanges) ? [] : key ? [key] : await dkim.publishedKeys(db, current.id);
      const { domain } = await editZone(
        current.id,
        account,
        (_zone, entries) => {
          const mail = mailWanted
            ? mailRecordsEdit(entries, mailWanted, next.mail_enabled)
            : { entries, changed: new Map(), removed: [] };
          return mailChanges || dmarcChanges
            ? bothEdits(mail, (after) => mailAuthEdit(after, keys, next.mail_enabled ? dmarc : null, '/mail_enabled'))
            : mail;
        },
        {
          // Checked again under the zone lock: of two writers with one version, the second gets a 412.
          zoneVersion: current.version,
          fields: next,
          event: 'domain.updated',
          managed: true,
          alongside: async (tx, changed) => {
            if (!next.mail_enabled && mailChanges) {
              const addresses = await hooks.mail.holders(tx, current);
              if (addresses.length) throw inUse(current.name, addresses);
              await dkim.deleteKeys(tx, current.id);
            }
            if (key) await dkim.insertKey(tx, key);
            if (catchAllChanges && next.catch_all !== null && !(await hooks.mail.hasAddress(tx, current, next.catch_all)))
              throw invalid([
                {
                  pointer: '/catch_all',
                  code: 'unknown_address',
                  detail: `${next.catch_all} is no mailbox or forwarder of ${current.name}`,
                },
              ]);
            // Mail on or off, a catch-all, or a suspension (logins refused): the mail server's view changes too.
            if (mailChanges || catchAllChanges || next.status !== current.status) await hooks.mail.changed(tx, changed);
          },
        },
      );
      return present(domain);
    },

    /** The DKIM key that signs and the one retired by the last rotation, while it is still published. */
    async getDkim(caller: Caller, ref: string): Promise<DomainDkim> {
      const domain = await load(caller, ref);
      if (!domain.mail_enabled) throw conflict('invalid_state', `Mail is not enabled on ${domain.name}.`);
      const [signing, previous] = await dkim.publishedKeys(db, domain.id);
      const present = (k: dkim.DkimKeyRow) => ({
        selector: k.selector,
        public_key: k.public_key,
        dns_record: { name: `${dkimRecordName(k.selector)}.${domain.name}`, type: 'TXT' as const, content: dkimRecordContent(k) },
        created_at: k.created_at,
      });
      if (!signing) throw conflict('invalid_state', `${domain.name} has no DKIM key yet.`);
      return {
        domain_id: domain.id,
        ...present(signing),
        previous: previous?.retired_at
          ? {
              ...present(previous),
              retired_at: previous.retired_at,
              removed_after: new Date(new Date(previous.retired_at).getTime() + RETIRED_KEY_DAYS * 86_400_000).toISOString(),
            }
          : null,
      };
    },

    /**
     * A new signing key under a new selector; the old one stays published for 7 days (mail it
     * signed still verifies), then the hourly housekeeping removes it.
     */
    async rotateDkim(caller: Caller, ref: string): Promise<DomainDkim> {
      const domain = await load(caller, ref);
      const account = await writableAccount(db, caller, domain.account_id);
      if (!domain.mail_enabled)
        throw conflict('invalid_state', `Mail is not enabled on ${domain.name}; there is no key to rotate.`);
      const published = await dkim.publishedKeys(db, domain.id);
      const key = await newKey(
        domain.id,
        published.map((k) => k.selector),
      );
      await editZone(
        domain.id,
        account,
        (_zone, entries) => mailAuthEdit(entries, [key, ...published], dmarcOf(domain), '/dkim'),
        {
          managed: true,
          event: 'domain.dkim.rotated',
          alongside: async (tx, changed) => {
            await dkim.retireSigningKey(tx, domain.id, clock.now());
            await dkim.insertKey(tx, key);
            await hooks.mail.changed(tx, changed);
          },
        },
      );
      return this.getDkim(caller, domain.id);
    },

    /** Housekeeping: retired keys past their 7 days leave the zone and the database. */
    async pruneRetiredDkim(now: Date): Promise<void> {
      const before = new Date(now.getTime() - RETIRED_KEY_DAYS * 86_400_000);
      for (const id of await dkim.domainsWithExpiredKeys(db, before)) {
        const domain = await repo.findDomainById(db, id);
        const account = domain && (await accounts.findAccountById(db, domain.account_id));
        if (!domain || !account) continue;
        const kept = (await dkim.publishedKeys(db, id)).filter((k) => !k.retired_at || new Date(k.retired_at) >= before);
        await editZone(id, account, (_zone, entries) => mailAuthEdit(entries, kept, dmarcOf(domain), '/dkim'), {
          managed: true,
          alongside: async (tx) => {
            await dkim.deleteExpiredKeys(tx, id, before);
          },
        });
      }
    },

    /**
     * Deletes the domain, its zone and its mail maps. Mailboxes and forwarders hold it (409
     * `in_use`) unless `cascade`, which deletes them with it, each with its own event.
     */
    async remove(caller: Caller, ref: string, options: { cascade: boolean }, expectedVersion?: number): Promise<void> {
      const current = await load(caller, ref);
      const account = (await accounts.findAccountById(db, current.account_id)) as accounts.AccountRow;
      requireWritable(caller, account);
      checkVersion(expectedVersion, current.version);
      await db.transaction(async (tx) => {
        // Under the zone lock, which a new address also takes: the list is complete.
        const locked = await repo.findCountedDomainById(tx, current.id, true);
        if (!locked) throw notFound('domain');
        const held: { d: DomainDependent; by: UsedBy[] }[] = [];
        for (const d of [hooks.sites, hooks.mail]) held.push({ d, by: await d.holders(tx, current) });
        const usedBy = held.flatMap((h) => h.by);
        if (usedBy.length && !options.cascade) throw inUse(current.name, usedBy);
        for (const { d, by } of held) if (by.length) requireScope(caller, d.scope);
        for (const { d, by } of held) if (by.length) await d.release(tx, current);
        await publishZoneChange(deps, tx, locked, 'domain.deleted', {});
        await deps.jobs.send(tx, JOBS.mailApply, { domain_id: locked.id, name: locked.name, account_id: locked.account_id });
        await repo.deleteDomain(tx, current.id);
      });
    },

    async zoneFile(caller: Caller, ref: string): Promise<{ text: string; version: number }> {
      const domain = await load(caller, ref);
      const unit = await repo.loadZoneUnit(db, domain.id);
      if (!unit) throw notFound('domain');
      return { text: renderZoneFile({ name: unit.name, serial: unit.serial, records: unit.records }), version: domain.version };
    },

    async listRecords(
      caller: Caller,
      ref: string,
      filter: { name?: string; type?: string },
      page: PageParams,
    ): Promise<DnsRecord[]> {
      const domain = await load(caller, ref);
      // Owner names are stored as A-labels: a Unicode `name` filter means its A-label.
      const name = filter.name === undefined ? undefined : (asciiName(filter.name) ?? filter.name);
      return (await records.listRecords(db, domain.id, { ...filter, name }, page)).map((r) => toRecord(r, domain.name));
    },

    async getRecord(caller: Caller, ref: string, id: string): Promise<DnsRecord> {
      const domain = await load(caller, ref);
      const row = await records.findRecord(db, domain.id, id);
      if (!row) throw notFound('record');
      return toRecord(row, domain.name);
    },
  };
}
export type DomainsService = ReturnType<typeof domainsService>;

/** Domains count against the account's usage and max_domains. */
const domainCounter = accounts.counterOf('domains', repo.domainCounts);

/** Terminating an account: each of its zones and mail domains is withdrawn by its apply job. */
export const domainAccountHooks = (jobs: JobQueue): Partial<AccountHooks> => ({
  counters: [domainCounter],
  terminating: [
    async (tx, accountId) => {
      for (const zone of await repo.zonesOfAccount(tx, accountId)) {
        await jobs.send(tx, JOBS.dnsApply, { domain_id: zone.id, name: zone.name });
        await jobs.send(tx, JOBS.mailApply, { domain_id: zone.id, name: zone.name, account_id: accountId });
      }
    },
  ],
});
