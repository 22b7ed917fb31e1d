import type { Queryable } from '../../../db/client.js';
import { isUniqueViolation } from '../../../db/errors.js';
import { conflict, invalid, quotaExceeded } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { checkVersion } from '../../../lib/if-match.js';
import type * as accounts from '../../accounts/index.js';
import { limitsOf } from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import * as repo from '../records/repo.js';
import type { ZoneEntry } from '../records/repo.js';
import { checkZone } from '../records/validate.js';
import * as domains from '../repo.js';
import { zoneCommitter, type ZoneDiff } from './change.js';

/** What a change does to a zone: the records after it, those written (with their request pointers), those removed. */
export interface ZoneEdit {
  entries: ZoneEntry[];
  changed: Map<ZoneEntry, string>;
  removed: string[];
}

export interface ZoneEditOptions {
  dryRun?: boolean;
  /** The domain version the change was read at (If-Match, or the caller's own read): 412 if it moved. */
  zoneVersion?: number;
  /** The domain's own fields and event, when the change is a domain update (mail on or off, status). */
  fields?: domains.DomainFields;
  event?: string;
  /** More writes that must commit with the change (a change set's status, its event). */
  alongside?: (tx: Queryable, domain: domains.DomainRow, diff: ZoneDiff) => Promise<void>;
  /** The API's own edit of managed records (ACME proofs): their removals are meant. */
  managed?: boolean;
}

type EditChange = (zone: string, entries: repo.StoredEntry[]) => ZoneEdit;

interface ZoneEditResult<D> {
  domain: D;
  edit: ZoneEdit;
  diff: ZoneDiff;
}

/**
 * The changed and the new records. checkZone has refused a duplicate already: only a content
 * made on purpose to share another's key gets here as one (migration 0023 keys long content by
 * its MD5), and is refused as the duplicate the key takes it for.
 */
async function writeRecords(tx: Queryable, domainId: string, updates: ZoneEntry[], inserts: ZoneEntry[]): Promise<void> {
  try {
    for (const entry of updates) await repo.updateRecord(tx, domainId, entry as ZoneEntry & { id: string });
    await repo.insertRecords(tx, domainId, inserts as (ZoneEntry & { id: string })[]);
  } catch (err) {
    if (isUniqueViolation(err, 'dns_records_unique_key'))
      throw conflict(
        'already_exists',
        'Another record of this set has the same key (content over 2,000 octets is keyed by its MD5).',
      );
    throw err;
  }
}

/**
 * The one path by which records change: lock the zone, let `change` edit its record list,
 * validate the result against every zone rule, enforce the plan's record limit, and write it
 * all with one serial bump in one transaction. The caller has checked reach and writability.
 */
export function zoneEditor(deps: ServiceDeps) {
  const { db } = deps;
  const commitZoneChange = zoneCommitter(deps);

  /** With the domain's own `fields` and no dry run an edit always commits: the domain comes back as shown, its records counted. */
  function editZone(
    domainId: string,
    account: accounts.AccountRow,
    change: EditChange,
    options: ZoneEditOptions & { fields: domains.DomainFields; dryRun?: false },
  ): Promise<ZoneEditResult<domains.CountedDomainRow>>;
  /** Else the domain as locked when nothing is written (a dry run, an edit that changes nothing). */
  function editZone(
    domainId: string,
    account: accounts.AccountRow,
    change: EditChange,
    options?: ZoneEditOptions,
  ): Promise<ZoneEditResult<domains.DomainRow>>;
  async function editZone(
    domainId: string,
    account: accounts.AccountRow,
    change: EditChange,
    options: ZoneEditOptions = {},
  ): Promise<ZoneEditResult<domains.DomainRow>> {
    return db.transaction(async (tx) => {
      const locked = (await domains.findDomainById(tx, domainId, true)) as domains.DomainRow;
      checkVersion(options.zoneVersion, locked.version);
      const current = await repo.zoneEntries(tx, domainId);
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
      if (diff.created + diff.updated + diff.deleted === 0 && !options.fields) {
        await options.alongside?.(tx, locked, diff);
        return { domain: locked, edit, diff };
      }
      await repo.deleteRecords(tx, domainId, edit.removed, options.managed);
      for (const entry of inserts) entry.id = newId('rec');
      await writeRecords(tx, domainId, updates, inserts);
      const changed = await commitZoneChange(tx, locked, { fields: options.fields, event: options.event, diff });
      await options.alongside?.(tx, changed, diff);
      return { domain: changed, edit, diff };
    });
  }
  return editZone;
}
