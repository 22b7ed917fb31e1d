import { type FieldError, invalid } from '../../../lib/errors.js';
import { mergeFields } from '../../../lib/merge-patch.js';
import { type StoredEntry, type ZoneEntry } from '../records/repo.js';
import { normalizeRecord, type RecordInput } from '../records/validate.js';
import type { ChangeRequest } from './schemas.js';

const unknownRecord = (pointer: string): FieldError => ({
  pointer,
  code: 'unknown_record',
  detail: 'is not a record of this zone',
});
const managed = (pointer: string): FieldError => ({
  pointer,
  code: 'managed',
  detail: 'SOA and apex NS records are maintained by the API',
});

/**
 * The zone edit a change set makes, all or nothing: every failure is reported with a pointer
 * into the request (`/create/1/content`, `/update/0/id`, `/delete/2`).
 */
export function changeSetEdit(request: ChangeRequest) {
  return (zone: string, entries: StoredEntry[]) => {
    const errors: FieldError[] = [];
    const byId = new Map(entries.map((e) => [e.id, e]));
    const replaced = new Map<string, ZoneEntry>();
    const changed = new Map<ZoneEntry, string>();
    const added: ZoneEntry[] = [];

    (request.create ?? []).forEach((input, i) => {
      const r = normalizeRecord(zone, input, `/create/${i}`);
      errors.push(...r.errors);
      if (r.record) {
        added.push(r.record);
        changed.set(r.record, `/create/${i}`);
      }
    });
    (request.update ?? []).forEach(({ id, ...fields }, i) => {
      const row = byId.get(id);
      if (!row || row.managed) {
        errors.push((row ? managed : unknownRecord)(`/update/${i}/id`));
        return;
      }
      const merged = mergeFields<RecordInput>({ name: row.name, type: row.type, ttl: row.ttl, content: row.content }, fields);
      const r = normalizeRecord(zone, merged, `/update/${i}`);
      errors.push(...r.errors);
      if (r.record) {
        r.record.id = id;
        replaced.set(id, r.record);
        changed.set(r.record, `/update/${i}`);
      }
    });
    const removed: string[] = [];
    (request.delete ?? []).forEach((id, i) => {
      const row = byId.get(id);
      if (!row || row.managed) errors.push((row ? managed : unknownRecord)(`/delete/${i}`));
      else if (replaced.has(id))
        errors.push({ pointer: `/delete/${i}`, code: 'conflict', detail: 'is also updated by this change set' });
      else removed.push(id);
    });
    if (errors.length) throw invalid(errors);
    const gone = new Set(removed);
    const next = entries.filter((e) => !gone.has(e.id)).map((e) => replaced.get(e.id) ?? e);
    return { entries: [...next, ...added], changed, removed };
  };
}
