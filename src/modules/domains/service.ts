import { type Caller, requireKind, requireScope, requireWritable } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { parseDomainName } from '../../lib/domain-name.js';
import { conflict, invalid, notFound } from '../../lib/errors.js';
import { isId, newId } from '../../lib/ids.js';
import { nextSerial } from '../../lib/soa-serial.js';
import { checkVersion, mergeFields } from '../../lib/versioning.js';
import type { PageParams } from '../../http/pagination.js';
import type { ServiceDeps } from '../deps.js';
import * as accounts from '../accounts/repo.js';
import { lockBelowLimit, writableAccount } from '../accounts/service.js';
import { renderZoneFile } from '../../provisioning/render/zone-file.js';
import { JOBS } from '../../jobs/names.js';
import * as emails from '../emails/repo.js';
import { addressEvent, presentAddress } from '../emails/representation.js';
import { touchMailUnit } from '../emails/unit.js';
import * as sites from '../sites/repo.js';
import { beginSiteDeletion } from '../sites/service.js';
import * as repo from './repo.js';
import { toDomain, toRecord, type DnsRecord, type Domain } from './representation.js';
import { zoneEditor } from '../dns/zone-edit.js';
import { mailRecordsEdit } from './mail-records.js';
import { publishZoneChange } from './zone-change.js';
import { initialRecords, mailRecords, type ZoneDefaults, type ZoneTemplate } from './template.js';

export interface CreateDomainInput {
  account_id: string;
  name: string;
  mail_enabled?: boolean;
  template?: ZoneTemplate;
}

export interface DomainFields {
  mail_enabled: boolean;
  status: 'active' | 'suspended';
}

/** 409 `in_use`, naming what holds the domain. */
const inUse = (name: string, addresses: emails.AddressRow[], heldBy: sites.SiteRow[] = []) =>
  conflict('in_use', `Sites, mailboxes or forwarders still use ${name}; delete them first or pass cascade=true.`, {
    used_by: [
      ...heldBy.map((s) => ({ type: 'site', id: s.id, hostname: s.hostname })),
      ...addresses.map((a) => ({ type: a.kind === 'mailbox' ? 'email' : 'email_forwarder', id: a.id, address: a.address })),
    ],
  });

/** `{domain}` in a path is an id or a name (A-label or Unicode); anything else matches nothing. */
function domainRef(ref: string): { id?: string; name?: string } {
  if (isId('dom', ref)) return { id: ref };
  const parsed = parseDomainName(ref);
  return parsed.ok ? { name: parsed.ascii } : {};
}

export function domainsService(deps: ServiceDeps) {
  const { db, clock, config } = deps;
  const zone: ZoneDefaults = { nameservers: config.nameservers, webIpv4: config.webIpv4, webIpv6: config.webIpv6 };
  const present = (r: repo.DomainRow) => toDomain(r, zone.nameservers);

  async function load(caller: Caller, ref: string): Promise<repo.DomainRow> {
    const where = domainRef(ref);
    const row = where.id || where.name ? await repo.findDomain(db, caller, where) : undefined;
    if (!row) throw notFound('domain');
    return row;
  }

  const editZone = zoneEditor(deps);

  return {
    load,
    async get(caller: Caller, ref: string): Promise<Domain> {
      return present(await load(caller, ref));
    },

    async list(caller: Caller, filter: repo.DomainFilter, page: PageParams): Promise<Domain[]> {
      const name = filter.name ? parseDomainName(filter.name) : null;
      const f = name ? { ...filter, name: name.ok ? name.ascii : '\u0000' } : filter;
      return (await repo.listDomains(db, caller, f, page)).map(present);
    },

    async create(caller: Caller, input: CreateDomainInput): Promise<Domain> {
      const parsed = parseDomainName(input.name);
      if (!parsed.ok) throw invalid([{ pointer: '/name', code: parsed.problem, detail: parsed.detail }]);
      const account = await writableAccount(db, caller, input.account_id);
      const id = newId('dom');
      try {
        const row = await db.transaction(async (tx) => {
          await lockBelowLimit(tx, account.id, 'max_domains', repo.countDomains);
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
          const records = initialRecords(parsed.ascii, zone, serial, input.template ?? 'default', mail);
          await repo.insertRecords(tx, id, records);
          const created = (await repo.findDomainById(tx, id)) as repo.DomainRow;
          await publishZoneChange(deps, tx, created, 'domain.created', { created: records.length, updated: 0, deleted: 0 });
          return created;
        });
        return present(row);
      } catch (err) {
        if (isUniqueViolation(err, 'domains_name_key'))
          throw conflict('already_exists', `The domain ${parsed.ascii} is already hosted here.`);
        throw err;
      }
    },

    /** mail_enabled adds or removes the mail records; status is the operator's or reseller's. One serial bump. */
    async update(caller: Caller, ref: string, patch: Partial<DomainFields>, expectedVersion?: number): Promise<Domain> {
      const current = await load(caller, ref);
      const account = (await accounts.findAccountById(db, current.account_id)) as accounts.AccountRow;
      requireWritable(caller, account);
      checkVersion(expectedVersion, current.version);
      if (patch.status !== undefined && patch.status !== current.status)
        requireKind(caller, ['operator', 'reseller'], 'suspend domains');
      const next = mergeFields<DomainFields>({ mail_enabled: current.mail_enabled, status: current.status }, patch);

      const mailChanges = next.mail_enabled !== current.mail_enabled;
      const { domain } = await editZone(
        current.id,
        account,
        (_zone, entries) =>
          mailChanges
            ? mailRecordsEdit(entries, mailRecords(current.name, zone), next.mail_enabled)
            : { entries, changed: new Map(), removed: [] },
        {
          // Checked again under the zone lock: of two writers with one version, the second gets a 412.
          zoneVersion: current.version,
          fields: next,
          event: 'domain.updated',
          alongside: async (tx, changed) => {
            if (!next.mail_enabled && mailChanges) {
              const addresses = await emails.addressesOfDomain(tx, current.id);
              if (addresses.length) throw inUse(current.name, addresses);
            }
            // Mail on or off, or a suspension (logins refused): the mail server's view changes too.
            if (mailChanges || next.status !== current.status) await touchMailUnit(tx, deps.jobs, changed);
          },
        },
      );
      return present(domain);
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
        const locked = await repo.findDomainById(tx, current.id, true);
        if (!locked) throw notFound('domain');
        const addresses = await emails.addressesOfDomain(tx, current.id);
        const heldBy = (await sites.sitesUnderDomain(tx, current.account_id, current.name)).filter(
          (s) => s.status !== 'deleting',
        );
        if ((addresses.length || heldBy.length) && !options.cascade) throw inUse(current.name, addresses, heldBy);
        if (addresses.length) requireScope(caller, 'emails:write');
        if (heldBy.length) requireScope(caller, 'sites:write');
        for (const a of addresses) await addressEvent(tx, 'deleted', a, await presentAddress(config.dataDir, a));
        for (const site of heldBy) await beginSiteDeletion(tx, deps.jobs, site);
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
      return (await repo.listRecords(db, domain.id, filter, page)).map((r) => toRecord(r, domain.name));
    },

    async getRecord(caller: Caller, ref: string, id: string): Promise<DnsRecord> {
      const domain = await load(caller, ref);
      const row = await repo.findRecord(db, domain.id, id);
      if (!row) throw notFound('record');
      return toRecord(row, domain.name);
    },
  };
}
export type DomainsService = ReturnType<typeof domainsService>;

/** Domains count against the account's usage and max_domains. */
export const domainCounter = async (db: Queryable, accountId: string) => ({ domains: await repo.countDomains(db, accountId) });
