import { setTimeout as sleep } from 'node:timers/promises';
import { findAccountById, type AccountRow } from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import type { StoredEntry } from '../records/repo.js';
import * as domains from '../repo.js';
import { zoneEditor } from './edit.js';

const OWNER = '_acme-challenge';

/** A zone holding DNS-01 proofs, and the generation that carries them. */
export interface ProofsInZone {
  domainId: string;
  generation: number;
}

/**
 * ACME DNS-01 proofs as managed TXT records at `_acme-challenge.<name>` in the zone of
 * the account that holds the name (the longest of its domains that covers it). Managed records
 * are the API's: owners see them but cannot change or delete them, and a sync keeps them.
 */
export function acmeChallengeRecords(deps: ServiceDeps) {
  const { db } = deps;
  const editZone = zoneEditor(deps);

  /** The proofs at `_acme-challenge.<relative name>` become `values` (none: removed), in one zone change. */
  async function set(accountId: string, name: string, values: string[]): Promise<ProofsInZone | null> {
    const zone = (await domains.zonesOfAccount(db, accountId))
      .filter((d) => name === d.name || name.endsWith(`.${d.name}`))
      .sort((a, b) => b.name.length - a.name.length)[0];
    if (!zone) return null;
    const account = (await findAccountById(db, accountId)) as AccountRow;
    const owner = name === zone.name ? OWNER : `${OWNER}.${name.slice(0, -zone.name.length - 1)}`;
    await editZone(
      zone.id,
      account,
      (_zone, entries: StoredEntry[]) => {
        const stale = entries.filter((e) => e.managed && e.type === 'TXT' && e.name === owner);
        const fresh = values.map((content) => ({ name: owner, type: 'TXT', ttl: 60, content, managed: true }));
        return {
          entries: [...entries.filter((e) => !stale.includes(e)), ...fresh],
          changed: new Map(fresh.map((e) => [e, '/acme'])),
          removed: stale.map((e) => e.id),
        };
      },
      { managed: true },
    );
    // Read after the commit: the generation that carries the proofs, or a later one.
    const progress = await domains.zoneProgress(db, zone.id);
    return { domainId: zone.id, generation: progress?.generation ?? 0 };
  }

  /** Resolves once the DNS server serves the zone at `generation`; throws on the zone's apply error or after `timeoutMs`. */
  async function served(zone: ProofsInZone, timeoutMs = 60_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const p = await domains.zoneProgress(db, zone.domainId);
      if (!p) throw new Error('the zone was deleted while proving control of a name in it');
      if (p.applied_generation >= zone.generation) return;
      if (Date.now() > until)
        throw new Error(`the zone was not applied within ${timeoutMs / 1000} s${p.sync_error ? `: ${p.sync_error}` : ''}`);
      await sleep(100);
    }
  }

  return { set, served };
}
export type AcmeChallengeRecords = ReturnType<typeof acmeChallengeRecords>;
