import type { Db } from '../db/client.js';
import * as domains from '../modules/domains/repo.js';
import type { DnsDriver } from './driver.js';

/**
 * The `dns.apply` job: loads the whole zone unit and hands it to the driver. Jobs are not
 * de-duplicated on the queue; a unit already applied at its current generation is skipped, so
 * a burst of changes costs one apply. A failure marks the domain `sync_state: error` and
 * rethrows, and the queue retries with backoff.
 */
export function dnsReconciler(db: Db, driver: DnsDriver) {
  return async (data: Record<string, unknown>): Promise<void> => {
    const id = String(data.domain_id);
    const name = String(data.name);
    const unit = await domains.loadZoneUnit(db, id);
    if (!unit) {
      // Deleted. The name may already belong to a new domain whose zone must stay.
      if (!(await domains.domainNameTaken(db, name))) await driver.removeZone(name);
      return;
    }
    if (unit.applied_generation >= unit.generation) return;
    try {
      await driver.applyZone({ name: unit.name, serial: unit.serial, records: unit.records });
      await domains.markApplied(db, id, unit.generation);
    } catch (err) {
      await domains.markSyncError(db, id, err instanceof Error ? err.message : String(err));
      throw err;
    }
  };
}
