import type { StoredEntry } from '../dns/repo.js';
import type { ZoneEntry } from '../dns/validate.js';
import type { ZoneEdit } from '../dns/zone-edit.js';
import type { NewRecord } from './repo.js';

const isSpf = (e: Pick<ZoneEntry, 'type' | 'content'>) => e.type === 'TXT' && /^v=spf1(\s|$)/i.test(e.content);

/**
 * Switching mail on adds the template's MX, SPF and `mail` address records, except where the
 * owner already has a set of that type at that name (their SPF policy, their MX, their `mail`
 * host, or a CNAME there): the owner's records win. A TXT joins an existing TXT set with that
 * set's TTL (one TTL per set). Switching mail off removes the template records again.
 */
export function mailRecordsEdit(entries: StoredEntry[], template: NewRecord[], on: boolean): ZoneEdit {
  if (!on) {
    const same = (e: ZoneEntry) => template.some((t) => t.name === e.name && t.type === e.type && t.content === e.content);
    const removed = entries.filter((e) => !e.managed && same(e));
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
    changed.set({ name: t.name, type: t.type, ttl, content: t.content }, '/mail_enabled');
  }
  return { entries: [...entries, ...changed.keys()], changed, removed: [] };
}
