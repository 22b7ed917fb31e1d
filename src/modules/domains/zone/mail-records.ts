import { type StoredEntry, type ZoneEntry, type NewRecord } from '../records/repo.js';
import type { ZoneEdit } from './edit.js';

const isSpf = (e: Pick<ZoneEntry, 'type' | 'content'>) => e.type === 'TXT' && /^v=spf1(\s|$)/i.test(e.content);

/**
 * Switching mail on adds the template's MX, SPF and `mail` address records, except where the
 * owner already has a set of that type at that name (their SPF policy, their MX, their `mail`
 * host, or a CNAME there): the owner's records win. A TXT joins an existing TXT set with that
 * set's TTL (one TTL per set). Switching mail off removes the records the template wrote and
 * the owner has not edited since.
 */
export function mailRecordsEdit(entries: StoredEntry[], template: NewRecord[], on: boolean): ZoneEdit {
  if (!on) {
    const same = (e: ZoneEntry) => template.some((t) => t.name === e.name && t.type === e.type && t.content === e.content);
    // Only what the template wrote: an owner's record with the same content is the owner's.
    const removed = entries.filter((e) => e.template && same(e));
    return { entries: entries.filter((e) => !removed.includes(e)), changed: new Map(), removed: removed.map((e) => e.id) };
  }
  const changed = new Map<ZoneEntry, string>();
  for (const t of template) {
    const atName = entries.filter((e) => e.name === t.name);
    const taken = atName.some(
      (e) =>
        e.type === 'CNAME' || (t.type === 'TXT' ? isSpf(e) : e.type === t.type) || (e.type === t.type && e.content === t.content),
    );
    if (taken) continue;
    const ttl = atName.find((e) => e.type === t.type)?.ttl ?? t.ttl;
    changed.set({ name: t.name, type: t.type, ttl, content: t.content, template: true }, '/mail_enabled');
  }
  return { entries: [...entries, ...changed.keys()], changed, removed: [] };
}
