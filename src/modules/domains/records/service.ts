import { type Caller, requireWritable } from '../../../auth/caller.js';
import { type FieldError, invalid, notFound, preconditionRequired } from '../../../lib/errors.js';
import { checkVersion } from '../../../lib/if-match.js';
import { mergeFields } from '../../../lib/merge-patch.js';
import * as accounts from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import * as domains from '../repo.js';
import { toRecord } from '../representation.js';
import type { DomainsService } from '../service.js';
import type { ZoneDiff } from '../zone/change.js';
import { zoneEditor, type ZoneEdit, type ZoneEditOptions } from '../zone/edit.js';
import { parseZoneFile } from '../zone/parser.js';
import * as repo from './repo.js';
import type { ZoneEntry } from './repo.js';
import type { DnsRecord, RecordPatch, SyncResult } from './schemas.js';
import { MIN_TTL, normalizeRecord, type RecordInput, ttlOutOfRange } from './validate.js';

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
export function recordsService(deps: ServiceDeps, domainsSvc: DomainsService) {
  const { db } = deps;
  const editZone = zoneEditor(deps);

  /** Loads the zone in the caller's reach, checks it may write, then edits it (see zoneEditor). */
  async function changeZone(
    caller: Caller,
    ref: string,
    change: (zone: string, entries: repo.StoredEntry[]) => ZoneEdit,
    options: ZoneEditOptions = {},
  ): Promise<{ domain: domains.DomainRow; edit: ZoneEdit; diff: ZoneDiff }> {
    const domain = await domainsSvc.load(caller, ref);
    const account = (await accounts.findAccountById(db, domain.account_id)) as accounts.AccountRow;
    requireWritable(caller, account);
    return editZone(domain.id, account, change, options);
  }

  const reload = async (domainId: string, recordId: string, zone: string): Promise<DnsRecord> =>
    toRecord((await repo.findRecord(db, domainId, recordId)) as repo.RecordRow, zone);

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
        throw preconditionRequired('Replacing the zone needs If-Match with the zone ETag (GET /v1/domains/{domain}).');
      }
      let deleted: ZoneEntry[] = [];
      let unchanged = 0;
      const { domain, edit } = await changeZone(
        caller,
        ref,
        (zone, entries) => {
          unchanged = 0; // afresh: the edit may be made again (zoneEditor)
          const errors: FieldError[] = [];
          const key = (e: ZoneEntry) => `${e.name}\u0000${e.type}\u0000${e.content}`;
          const existingByKey = new Map(entries.filter((e) => !e.managed).map((e) => [key(e), e]));
          const wanted = desired.flatMap((input, i) => {
            const pointer = options.pointers?.[i] ?? `/records/${i}`;
            // A TTL below the API's least is taken only as a move lowered it: a record sent back as a GET showed it.
            const low = input.ttl !== undefined && Number.isInteger(input.ttl) && input.ttl > 0 && input.ttl < MIN_TTL;
            const r = normalizeRecord(zone, low ? { ...input, ttl: MIN_TTL } : input, pointer);
            errors.push(...r.errors);
            if (r.record && low) {
              if (existingByKey.get(key(r.record))?.ttl !== input.ttl) {
                errors.push(ttlOutOfRange(pointer));
                return [];
              }
              r.record.ttl = input.ttl as number;
            }
            return r.record ? [{ record: r.record, pointer }] : [];
          });
          if (errors.length) throw invalid(errors);
          const next: ZoneEntry[] = entries.filter((e) => e.managed);
          // A record the API manages (DKIM, DMARC, ACME proofs), as an export shows it, is that record: it stays as kept.
          const managed = new Set(next.map(key));
          const changed = new Map<ZoneEntry, string>();
          for (const { record, pointer } of wanted) {
            const k = key(record);
            if (managed.has(k)) continue;
            const existing = existingByKey.get(k);
            if (!existing) {
              next.push(record);
              changed.set(record, pointer);
              continue;
            }
            existingByKey.delete(k);
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
    async update(caller: Caller, ref: string, id: string, patch: RecordPatch, expectedVersion?: number): Promise<DnsRecord> {
      const { domain } = await changeZone(caller, ref, (zone, entries) => {
        // Checked on the row read under the zone lock: of two writers with one ETag, one wins.
        const row = existing(entries, id, expectedVersion);
        // A TTL the request leaves alone may be a move's lowered one, below what the API takes: it stays.
        const ttl = patch.ttl ?? Math.max(row.ttl, MIN_TTL);
        const merged = mergeFields<RecordInput>({ name: row.name, type: row.type, ttl, content: row.content }, patch);
        const { record, errors } = normalizeRecord(zone, merged);
        if (!record) throw invalid(errors);
        record.id = id;
        if (patch.ttl === undefined) record.ttl = row.ttl;
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
export type RecordsService = ReturnType<typeof recordsService>;
