import { type Caller, requireWritable } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { AppError, invalid, notFound, quotaExceeded, type FieldError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion, mergeFields } from '../../lib/versioning.js';
import type { ServiceDeps } from '../deps.js';
import * as accounts from '../accounts/repo.js';
import { limitsOf } from '../accounts/service.js';
import * as domains from '../domains/repo.js';
import { toRecord, type DnsRecord } from '../domains/representation.js';
import type { DomainsService } from '../domains/service.js';
import { zoneCommitter, type ZoneDiff } from '../domains/zone-change.js';
import * as repo from './repo.js';
import { parseZoneFile } from './zone-parser.js';
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

/** What a change does to a zone: the records after it, those written (with their request pointers), those removed. */
interface ZoneEdit {
  entries: ZoneEntry[];
  changed: Map<ZoneEntry, string>;
  removed: string[];
}

export interface SyncResult {
  created: Omit<ZoneEntry, 'id' | 'managed'>[];
  updated: Omit<ZoneEntry, 'id' | 'managed'>[];
  deleted: Omit<ZoneEntry, 'id' | 'managed'>[];
  unchanged: number;
  serial: number;
  zone_version: number;
  dry_run: boolean;
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
    change: (zone: string, entries: repo.StoredEntry[]) => ZoneEdit,
    options: {
      dryRun?: boolean;
      zoneVersion?: number;
      /** More writes that must commit with the change (a change set's status, its event). */
      alongside?: (tx: Queryable, domain: domains.DomainRow, diff: ZoneDiff) => Promise<void>;
    } = {},
  ): Promise<{ domain: domains.DomainRow; edit: ZoneEdit; diff: ZoneDiff }> {
    const domain = await domainsSvc.load(caller, ref);
    const account = (await accounts.findAccountById(db, domain.account_id)) as accounts.AccountRow;
    requireWritable(caller, account);
    return db.transaction(async (tx) => {
      const locked = (await domains.findDomainById(tx, domain.id, true)) as domains.DomainRow;
      checkVersion(options.zoneVersion, locked.version);
      const current = await repo.zoneEntries(tx, domain.id);
      const edit = change(locked.name, current);
      const errors = checkZone(locked.name, edit.entries, edit.changed);
      if (errors.length) throw invalid(errors);
      const limit = limitsOf(account).max_dns_records_per_domain;
      const unmanaged = edit.entries.filter((e) => !e.managed).length;
      if (unmanaged > limit && unmanaged > current.filter((e) => !e.managed).length) {
        throw quotaExceeded([{ limit: 'max_dns_records_per_domain', allowed: limit, usage: unmanaged }]);
      }
      const updates = [...edit.changed.keys()].filter((e) => e.id);
      const inserts = [...edit.changed.keys()].filter((e) => !e.id);
      const diff = { created: inserts.length, updated: updates.length, deleted: edit.removed.length };
      if (options.dryRun) return { domain: locked, edit, diff };
      if (diff.created + diff.updated + diff.deleted === 0) {
        await options.alongside?.(tx, locked, diff);
        return { domain: locked, edit, diff };
      }
      await repo.deleteRecords(tx, domain.id, edit.removed);
      for (const entry of updates) await repo.updateRecord(tx, domain.id, entry as ZoneEntry & { id: string });
      for (const entry of inserts) entry.id = newId('rec');
      await repo.insertRecords(tx, domain.id, inserts as (ZoneEntry & { id: string })[]);
      const changed = await commitZoneChange(tx, locked, { diff });
      await options.alongside?.(tx, changed, diff);
      return { domain: changed, edit, diff };
    });
  }

  const reload = async (domainId: string, recordId: string, zone: string): Promise<DnsRecord> =>
    toRecord((await domains.findRecord(db, domainId, recordId)) as domains.RecordRow, zone);

  return {
    /** For change sets, which apply their own edits through the same path. */
    changeZone,
    /**
     * Sync: `desired` is the complete set of unmanaged records. Matching records (owner, type,
     * content) stay, a changed TTL is an update, the rest is created or deleted, all in one
     * transaction with one serial bump, or not at all. Needs the zone ETag in If-Match.
     */
    async sync(
      caller: Caller,
      ref: string,
      desired: RecordInput[],
      options: {
        zoneVersion?: number;
        dryRun: boolean;
        /** Where each record came from, for error pointers (zone import: `/lines/<n>`). */ pointers?: string[];
      },
    ): Promise<SyncResult> {
      if (options.zoneVersion === undefined) {
        throw new AppError(
          'precondition_required',
          'Replacing the zone needs If-Match with the zone ETag (GET /v1/domains/{domain}).',
        );
      }
      let deleted: ZoneEntry[] = [];
      let unchanged = 0;
      const { domain, edit } = await changeZone(
        caller,
        ref,
        (zone, entries) => {
          const errors: FieldError[] = [];
          const wanted = desired.flatMap((input, i) => {
            const pointer = options.pointers?.[i] ?? `/records/${i}`;
            const r = normalizeRecord(zone, input, pointer);
            errors.push(...r.errors);
            return r.record ? [{ record: r.record, pointer }] : [];
          });
          if (errors.length) throw invalid(errors);
          const key = (e: ZoneEntry) => `${e.name}\u0000${e.type}\u0000${e.content}`;
          const existingByKey = new Map(entries.filter((e) => !e.managed).map((e) => [key(e), e]));
          const next: ZoneEntry[] = entries.filter((e) => e.managed);
          const changed = new Map<ZoneEntry, string>();
          for (const { record, pointer } of wanted) {
            const existing = existingByKey.get(key(record));
            if (!existing) {
              next.push(record);
              changed.set(record, pointer);
              continue;
            }
            existingByKey.delete(key(record));
            if (existing.ttl === record.ttl) {
              next.push(existing);
              unchanged++;
            } else {
              const updated = { ...existing, ttl: record.ttl };
              next.push(updated);
              changed.set(updated, pointer);
            }
          }
          deleted = [...existingByKey.values()];
          return { entries: next, changed, removed: deleted.map((e) => e.id as string) };
        },
        options,
      );
      const plain = ({ name, type, ttl, content }: ZoneEntry) => ({ name, type, ttl, content });
      const changed = [...edit.changed.keys()];
      return {
        // New entries come from the request; updated ones are copies of stored rows (with a version).
        created: changed.filter((e) => !('version' in e)).map(plain),
        updated: changed.filter((e) => 'version' in e).map(plain),
        deleted: deleted.map(plain),
        unchanged,
        serial: domain.serial,
        zone_version: domain.version,
        dry_run: options.dryRun,
      };
    },

    /**
     * Zone import: the file's records (SOA and apex NS excepted: the API maintains them) become
     * the complete set, exactly as a sync; errors point at `/lines/<n>`.
     */
    async importZone(
      caller: Caller,
      ref: string,
      text: string,
      options: { zoneVersion?: number; dryRun: boolean },
    ): Promise<SyncResult> {
      const domain = await domainsSvc.load(caller, ref);
      const parsed = parseZoneFile(text, domain.name);
      if (parsed.errors.length) throw invalid(parsed.errors);
      const kept = parsed.records.filter((r) => r.type !== 'SOA' && !(r.type === 'NS' && r.name === '@'));
      return this.sync(caller, ref, kept, { ...options, pointers: kept.map((r) => `/lines/${r.line}`) });
    },

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
