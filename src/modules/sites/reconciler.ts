import type { Db } from '../../db/client.js';

import * as sites from './repo.js';
import { applyUnit } from '../../provisioning/apply-unit.js';
import type { WebDriver } from '../../provisioning/driver.js';
import type { SiteSpec } from '../../provisioning/render/nginx.js';
import { currentLink, siteDir } from '../../layout.js';

/** The unit as the web driver sees it; a suspended site or account gets the suspension page. */
export function siteSpec(unit: sites.WebUnit, dataDir: string): SiteSpec {
  return {
    id: unit.id,
    hostnames: [unit.hostname, ...unit.aliases],
    root: currentLink(siteDir(dataDir, unit.account_id, unit.id)),
    suspended: unit.status === 'suspended' || unit.account_status !== 'active',
  };
}

/**
 * The `web.apply` job, like `dns.apply`: renders the whole site unit through the driver,
 * skipping a unit already applied at its generation. A site that is gone stops being served;
 * one being provisioned or deleted is left to its own operation.
 */
export function webReconciler(db: Db, driver: WebDriver, dataDir: string) {
  return async (data: Record<string, unknown>): Promise<void> => {
    const id = String(data.site_id);
    const unit = await sites.loadWebUnit(db, id);
    if (!unit) return driver.removeSite(id);
    if (unit.status === 'provisioning' || unit.status === 'deleting' || unit.status === 'failed') return;
    await applyUnit(unit, () => driver.applySite(siteSpec(unit, dataDir)), {
      applied: (generation) => sites.markWebApplied(db, id, generation),
      failed: (message) => sites.markWebSyncError(db, id, message),
    });
  };
}
