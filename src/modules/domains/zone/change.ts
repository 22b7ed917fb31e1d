import type { Queryable } from '../../../db/client.js';
import { JOBS } from '../../../jobs/names.js';
import { staleVersion } from '../../../lib/if-match.js';
import { nextSerial } from '../../../lib/soa-serial.js';
import type { ServiceDeps } from '../../deps.js';
import { publishEvent } from '../../publishing/index.js';
import * as repo from '../repo.js';
import { toDomain } from '../representation.js';
import { soaContent } from './template.js';

export interface ZoneDiff {
  created: number;
  updated: number;
  deleted: number;
}

/**
 * The one way a zone changes, inside the caller's transaction: bump the serial once (and the
 * SOA with it), the domain's version and generation, then write the apply job of the zone
 * unit and the events. `event` names the domain's own event, if the change has one.
 */
export function zoneCommitter(deps: ServiceDeps) {
  const { clock, config } = deps;
  return async function commitZoneChange(
    tx: Queryable,
    current: repo.DomainRow,
    change: {
      fields?: repo.DomainFields;
      event?: string;
      diff: ZoneDiff;
      /** False when the caller sends the zone's apply job itself, once for several changes. */
      apply?: boolean;
    },
  ): Promise<repo.CountedDomainRow> {
    const serial = nextSerial(current.serial, clock.now());
    const { mail_enabled, status, dmarc_policy, dmarc_rua, catch_all } = current;
    const fields = change.fields ?? { mail_enabled, status, dmarc_policy, dmarc_rua, catch_all };
    const soa = soaContent(current.name, config.nameservers, serial);
    const row = await repo.updateDomain(tx, current.id, current.version, { ...fields, serial, soa });
    if (!row) throw staleVersion();
    await publishZoneChange(deps, tx, row, change.event, change.diff, change.apply !== false);
    return row;
  };
}

/** The zone unit's apply job: one is enough for every change its transaction commits. */
export const sendZoneApply = (deps: ServiceDeps, tx: Queryable, row: { id: string; name: string }) =>
  deps.jobs.send(tx, JOBS.dnsApply, { domain_id: row.id, name: row.name });

/** The apply job (unless the caller sends it, `apply` false) and the events of a zone change (also of a creation or a deletion). */
export async function publishZoneChange(
  deps: ServiceDeps,
  tx: Queryable,
  row: repo.CountedDomainRow,
  event: string | undefined,
  diff: Partial<ZoneDiff>,
  apply = true,
): Promise<void> {
  if (apply) await sendZoneApply(deps, tx, row);
  const data = toDomain(row, deps.config.nameservers);
  const base = {
    accountId: row.account_id,
    resellerId: row.reseller_id,
    resource: { type: 'domain', id: row.id, version: row.version },
  };
  if (event) await publishEvent(tx, { ...base, type: event, data });
  if (event !== 'domain.deleted')
    await publishEvent(tx, { ...base, type: 'dns.zone.changed', data: { domain: data, serial: row.serial, ...diff } });
}
