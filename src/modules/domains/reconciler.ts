import type { Db } from '../../db/client.js';
import { publicMessage } from '../../lib/errors.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { DnsDriver } from '../../provisioning/driver.js';
import type { DnssecService } from './dnssec/service.js';
import * as domains from './repo.js';

/**
 * The `dns.apply` job: loads the whole zone unit and hands it to the driver (see applyUnit),
 * signed as its DNSSEC settings say; a signed zone's state follows the outcome.
 * One waits per zone (jobs/names.ts, UNIT_KEYS); the generation check makes repeats cheap.
 */
export function dnsReconciler(db: Db, driver: DnsDriver, dnssec: Pick<DnssecService, 'signing' | 'applied'>) {
  return async (data: Record<string, unknown>): Promise<void> => {
    const id = String(data.domain_id);
    const name = String(data.name);
    // One apply of a zone at a time across processes: a slower, older one never writes last.
    await db.withSessionLock(`dns.apply:${id}`, async () => {
      const unit = await domains.loadZoneUnit(db, id);
      if (!unit) {
        // Deleted. The name may already belong to a new domain whose zone must stay.
        if (!(await domains.domainNameTaken(db, name))) await driver.removeZone(name);
        return;
      }
      const signing = await dnssec.signing(id);
      try {
        await applyUnit(
          unit,
          () => driver.applyZone({ name: unit.name, serial: unit.serial, records: unit.records, dnssec: signing }),
          domains.zoneUnits.marks(db, id),
        );
      } catch (err) {
        await dnssec.applied({ id, name }, signing, publicMessage(err));
        throw err;
      }
      await dnssec.applied({ id, name }, signing, null);
    });
  };
}
