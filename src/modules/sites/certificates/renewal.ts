import { periodic } from '../../../jobs/periodic.js';
import type { ServiceDeps } from '../../deps.js';
import * as sites from '../repo.js';
import { siteEvent } from '../representation.js';
import { requestIssue } from './issue.js';
import * as repo from './repo.js';

const DAY = 86_400_000;
/** `site.certificate.expiring` this long before a served certificate's end. */
const EXPIRING_NOTICE_MS = 14 * DAY;
/** A claimed certificate is not claimed again for this long, unless its job records an outcome first. */
const CLAIM_MS = 60 * 60_000;

/**
 * Renewal in every process: automatic certificates due for renewal, and failed ones
 * past their backoff, get an issuance job — once each, however many processes look, because a
 * claim moves the row's `retry_at` on in the same transaction as the job. Certificates close to
 * their end are announced once.
 */
export function certificateRenewal(deps: ServiceDeps, onError: (err: unknown) => void) {
  const { db, clock, config, jobs } = deps;

  async function tick(): Promise<void> {
    const now = clock.now();
    await db.transaction(async (tx) => {
      for (const id of await repo.claimDue(tx, now, new Date(now.getTime() + CLAIM_MS), 100)) {
        const site = (await sites.findSiteById(tx, id)) as sites.SiteRow;
        await requestIssue(tx, jobs, site, site.tls_status === 'active');
      }
    });
    await db.transaction(async (tx) => {
      for (const id of await repo.claimExpiring(tx, new Date(now.getTime() + EXPIRING_NOTICE_MS))) {
        await siteEvent(tx, 'site.certificate.expiring', (await sites.findSiteById(tx, id)) as sites.SiteRow);
      }
    });
  }

  return periodic(tick, config.certificateSchedulerMs, onError);
}
