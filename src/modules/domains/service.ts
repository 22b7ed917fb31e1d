import { type Caller, requireKind, requireWritable } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { parseDomainName } from '../../lib/domain-name.js';
import { conflict, invalid, notFound, quotaExceeded } from '../../lib/errors.js';
import { isId, newId } from '../../lib/ids.js';
import { nextSerial } from '../../lib/soa-serial.js';
import { checkVersion, mergeFields, staleVersion } from '../../lib/versioning.js';
import type { PageParams } from '../../http/pagination.js';
import type { ServiceDeps } from '../deps.js';
import * as accounts from '../accounts/repo.js';
import { limitsOf } from '../accounts/service.js';
import { JOBS } from '../../jobs/names.js';
import { appendEvent } from '../events/repo.js';
import { renderZoneFile } from '../../provisioning/render/zone-file.js';
import * as repo from './repo.js';
import { initialRecords, mailRecords, soaContent, type ZoneDefaults, type ZoneTemplate } from './template.js';

export const toDomain = (r: repo.DomainRow, nameservers: readonly string[]) => ({
  id: r.id,
  name: r.name,
  unicode_name: r.unicode_name,
  account_id: r.account_id,
  status: r.status,
  nameservers: [...nameservers],
  dns: { serial: r.serial, record_count: r.record_count },
  mail_enabled: r.mail_enabled,
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});
export type Domain = ReturnType<typeof toDomain>;

export const toRecord = (r: repo.RecordRow, domain: string) => ({
  id: r.id,
  domain_id: r.domain_id,
  name: r.name,
  fqdn: r.name === '@' ? `${domain}.` : `${r.name}.${domain}.`,
  type: r.type,
  ttl: r.ttl,
  content: r.content,
  managed: r.managed,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});
export type DnsRecord = ReturnType<typeof toRecord>;

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

  /**
   * Everything a zone change writes besides the change: the apply job of the zone unit, the
   * domain's event and `dns.zone.changed` with the new serial, all in the change's transaction.
   */
  async function zoneChanged(tx: Queryable, type: string, row: repo.DomainRow, diff: Record<string, unknown>): Promise<void> {
    await deps.jobs.send(tx, JOBS.dnsApply, { domain_id: row.id, name: row.name });
    const base = {
      accountId: row.account_id,
      resellerId: row.reseller_id,
      resource: { type: 'domain', id: row.id, version: row.version },
    };
    await appendEvent(tx, { ...base, type, data: present(row) });
    if (type !== 'domain.deleted') {
      await appendEvent(tx, { ...base, type: 'dns.zone.changed', data: { domain: present(row), serial: row.serial, ...diff } });
    }
  }

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
      const account = await accounts.findAccount(db, caller, input.account_id);
      if (!account) throw notFound('account');
      requireWritable(caller, account);
      if (account.status === 'terminating') throw conflict('invalid_state', 'The account is being terminated.');
      const id = newId('dom');
      try {
        const row = await db.transaction(async (tx) => {
          // The account row lock serialises concurrent creations against max_domains.
          const locked = (await accounts.findAccountById(tx, account.id, true)) as accounts.AccountRow;
          const limit = limitsOf(locked).max_domains;
          const count = await repo.countDomains(tx, account.id);
          if (count >= limit) throw quotaExceeded([{ limit: 'max_domains', allowed: limit, usage: count }]);
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
          await zoneChanged(tx, 'domain.created', created, { created: records.length, updated: 0, deleted: 0 });
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
      const row = await db.transaction(async (tx) => {
        const serial = nextSerial(current.serial, clock.now());
        if (!(await repo.updateDomain(tx, current.id, current.version, { ...next, serial }))) throw staleVersion();
        const mail = mailRecords(current.name, zone);
        let created = 0;
        let deleted = 0;
        if (next.mail_enabled && !current.mail_enabled) {
          await repo.insertRecords(tx, current.id, mail);
          created = mail.length;
        } else if (!next.mail_enabled && current.mail_enabled) {
          await repo.deleteRecordsWhere(tx, current.id, mail);
          deleted = mail.length;
        }
        await repo.setSoaContent(tx, current.id, soaContent(current.name, zone.nameservers, serial));
        const updated = (await repo.findDomainById(tx, current.id)) as repo.DomainRow;
        await zoneChanged(tx, 'domain.updated', updated, { created, updated: 1, deleted });
        return updated;
      });
      return present(row);
    },

    /**
     * Deletes the domain and its zone. Sites and mailboxes that use a domain arrive with their
     * modules; until then nothing can hold one, and `cascade` changes nothing.
     */
    async remove(caller: Caller, ref: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, ref);
      const account = (await accounts.findAccountById(db, current.account_id)) as accounts.AccountRow;
      requireWritable(caller, account);
      checkVersion(expectedVersion, current.version);
      await db.transaction(async (tx) => {
        await zoneChanged(tx, 'domain.deleted', current, {});
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
