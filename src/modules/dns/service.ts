import { type Caller, requireWritable } from '../../auth/caller.js';
import { invalid, notFound, quotaExceeded, type FieldError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion, mergeFields } from '../../lib/versioning.js';
import type { ServiceDeps } from '../deps.js';
import * as accounts from '../accounts/repo.js';
import { limitsOf } from '../accounts/service.js';
import * as domains from '../domains/repo.js';
import { toRecord, type DnsRecord } from '../domains/representation.js';
import type { DomainsService } from '../domains/service.js';
import { zoneCommitter } from '../domains/zone-change.js';
import * as repo from './repo.js';
import { checkZone, normalizeRecord, type RecordInput, type ZoneEntry } from './validate.js';

const managedError = (): FieldError => ({
  pointer: '',
  code: 'managed',
  detail: 'SOA and apex NS records are maintained by the API',
});

/** The record to change, as it is now: not managed, and at the version If-Match names. */
function existing(entries: repo.StoredEntry[], id: string, expectedVersion: number | undefined): repo.StoredEntry {
  const row = entries.find((e) => e.id === id);
  if (!row) throw notFound('record');
  if (row.managed) throw invalid([managedError()]);
  checkVersion(expectedVersion, row.version);
  return row;
}

/** Record writes: each one validated against the whole zone, committed with one serial bump. */
export function dnsService(deps: ServiceDeps, domainsSvc: DomainsService) {
  const { db } = deps;
  const commitZoneChange = zoneCommitter(deps);

  /**
   * Locks the zone, lets `change` edit its record list, validates the result, enforces the
   * plan's record limit and writes it all in one transaction.
   */
  async function changeZone(
    caller: Caller,
    ref: string,
    change: (
      zone: string,
      entries: repo.StoredEntry[],
    ) => { entries: ZoneEntry[]; changed: Map<ZoneEntry, string>; removed: string[] },
  ): Promise<{ domain: domains.DomainRow; entries: ZoneEntry[]; changed: Map<ZoneEntry, string> }> {
    const domain = await domainsSvc.load(caller, ref);
    const account = (await accounts.findAccountById(db, domain.account_id)) as accounts.AccountRow;
    requireWritable(caller, account);
    return db.transaction(async (tx) => {
      const locked = (await domains.findDomainById(tx, domain.id, true)) as domains.DomainRow;
      const current = await repo.zoneEntries(tx, domain.id);
      const next = change(locked.name, current);
      const errors = checkZone(locked.name, next.entries, next.changed);
      if (errors.length) throw invalid(errors);
      const limit = limitsOf(account).max_dns_records_per_domain;
      const unmanaged = next.entries.filter((e) => !e.managed).length;
      if (unmanaged > limit && unmanaged > current.filter((e) => !e.managed).length) {
        throw quotaExceeded([{ limit: 'max_dns_records_per_domain', allowed: limit, usage: unmanaged }]);
      }
      await repo.deleteRecords(tx, domain.id, next.removed);
      let created = 0;
      let updated = 0;
      for (const entry of next.changed.keys()) {
        if (entry.id) {
          await repo.updateRecord(tx, domain.id, entry as ZoneEntry & { id: string });
          updated++;
        } else {
          entry.id = newId('rec');
          await repo.insertRecord(tx, domain.id, entry as ZoneEntry & { id: string });
          created++;
        }
      }
      const row = await commitZoneChange(tx, locked, { diff: { created, updated, deleted: next.removed.length } });
      return { domain: row, entries: next.entries, changed: next.changed };
    });
  }

  const reload = async (domainId: string, recordId: string, zone: string): Promise<DnsRecord> =>
    toRecord((await domains.findRecord(db, domainId, recordId)) as domains.RecordRow, zone);

  return {
    async create(caller: Caller, ref: string, input: RecordInput): Promise<DnsRecord> {
      let created: ZoneEntry | undefined;
      const { domain } = await changeZone(caller, ref, (zone, entries) => {
        const { record, errors } = normalizeRecord(zone, input);
        if (!record) throw invalid(errors);
        created = record;
        return { entries: [...entries, record], changed: new Map([[record, '']]), removed: [] };
      });
      return reload(domain.id, (created as ZoneEntry).id as string, domain.name);
    },

    /** PUT and PATCH: the merged record is validated like a new one. */
    async update(
      caller: Caller,
      ref: string,
      id: string,
      patch: Partial<RecordInput>,
      expectedVersion?: number,
    ): Promise<DnsRecord> {
      const { domain } = await changeZone(caller, ref, (zone, entries) => {
        // Checked on the row read under the zone lock: of two writers with one ETag, one wins.
        const row = existing(entries, id, expectedVersion);
        const merged = mergeFields<RecordInput>({ name: row.name, type: row.type, ttl: row.ttl, content: row.content }, patch);
        const { record, errors } = normalizeRecord(zone, merged);
        if (!record) throw invalid(errors);
        record.id = id;
        return { entries: entries.map((e) => (e.id === id ? record : e)), changed: new Map([[record, '']]), removed: [] };
      });
      return reload(domain.id, id, domain.name);
    },

    async remove(caller: Caller, ref: string, id: string, expectedVersion?: number): Promise<void> {
      await changeZone(caller, ref, (_zone, entries) => {
        existing(entries, id, expectedVersion);
        return { entries: entries.filter((e) => e.id !== id), changed: new Map(), removed: [id] };
      });
    },
  };
}
export type DnsService = ReturnType<typeof dnsService>;
