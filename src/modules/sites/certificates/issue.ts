import type { Queryable } from '../../../db/client.js';
import { JOBS } from '../../../jobs/names.js';
import type { JobQueue } from '../../../jobs/queue.js';
import { publicMessage } from '../../../lib/errors.js';
import { backoffMs, uncovered } from '../../../tls/certificate.js';
import { obtainCertificate, type ChallengeSolver, type Issuer } from '../../../tls/issuer.js';
import type { ServiceDeps } from '../../deps.js';
import * as ops from '../../operations/index.js';
import * as sites from '../repo.js';
import { siteEvent } from '../representation.js';
import { queueWebApply } from '../unit.js';
import * as repo from './repo.js';

const ISSUE_OPERATION = 'site.certificate.issue';

const NOT_APPLICABLE = {
  code: 'not_applicable',
  title: 'Nothing to issue',
  detail: 'The site is gone or no longer asks for an automatic certificate.',
};
/**
 * Asks for an automatic certificate, in the transaction of the change that needs one: the
 * certificate row turns `pending` (a renewal stays `active`), a `site.certificate.issue`
 * operation opens (or the open one is shared), and the job is queued — one waiting per site.
 */
export async function requestIssue(tx: Queryable, jobs: JobQueue, site: sites.SiteRow, renewal = false) {
  await repo.requestCertificate(tx, site.id, renewal);
  const op = await issueOperation(tx, site);
  await jobs.send(tx, JOBS.certificateIssue, { site_id: site.id });
  return op;
}

/** The open `site.certificate.issue` operation of the site, opened if there is none. */
const issueOperation = async (tx: Queryable, site: sites.SiteRow) =>
  (
    await ops.startOperation(tx, {
      type: ISSUE_OPERATION,
      resourceType: 'site',
      resourceId: site.id,
      accountId: site.account_id,
      resellerId: site.reseller_id,
    })
  ).row;

/** Where the issuance job gets what it needs: the issuer, proofs for a site, the key that seals private keys. */
export interface IssueDeps {
  issuer: Issuer;
  solverFor: (site: sites.SiteRow) => ChallengeSolver;
  sealKey: Buffer;
}

/**
 * The `certificate.issue` job: obtains a certificate for every name of the site (a new key each
 * time), stores it sealed, and has the web server serve it. A failure is recorded with the
 * issuer's detail and a backoff (the renewal loop retries); a renewal that fails leaves the old
 * certificate served. One order per site at a time: the job holds the site's lock throughout.
 */
export function certificateJob(deps: ServiceDeps, o: IssueDeps) {
  const { db, clock, jobs } = deps;

  async function issue(siteId: string): Promise<void> {
    const site = await sites.findSiteById(db, siteId);
    const open = await ops.openOperation(db, siteId, ISSUE_OPERATION);
    if (!site || site.tls_mode !== 'auto' || !['active', 'suspended'].includes(site.status)) {
      if (open)
        await ops.transition(db, open.id, ['queued', 'running'], { status: 'failed', progress: 100, error: NOT_APPLICABLE });
      return;
    }
    // A second job for the site (an alias added while the first ran) reports as an operation of its own.
    const op = open ?? (await issueOperation(db, site));
    if (!(await ops.transition(db, op.id, ['queued', 'running'], { status: 'running', progress: 10 }))) return;
    const names = [site.hostname, ...site.aliases];
    const current = await repo.findCertificate(db, siteId);
    const renewal = Boolean(current?.certificate_pem) && uncovered(current?.names ?? [], names).length === 0;
    const outcome = await obtainCertificate(o.issuer, names, o.solverFor(site), o.sealKey).catch((err: unknown) => ({
      error: {
        code: 'certificate_failed',
        title: 'The certificate could not be obtained',
        detail: publicMessage(err),
      },
    }));
    await db.transaction(async (tx) => {
      // Deleted, or switched away from `auto`, meanwhile: the outcome is of no use.
      const locked = await sites.findSiteById(tx, siteId, true);
      if (!locked || locked.tls_mode !== 'auto') {
        await ops.transition(tx, op.id, ['running'], { status: 'failed', progress: 100, error: NOT_APPLICABLE });
        return;
      }
      if ('error' in outcome) {
        const retryAt = new Date(clock.now().getTime() + backoffMs((current?.failures ?? 0) + 1));
        await repo.saveFailure(tx, siteId, { renewal, error: outcome.error, retryAt });
      } else {
        await repo.saveIssued(tx, siteId, outcome);
      }
      // The site's representation changed; a new certificate is served by the web apply.
      await sites.updateSite(tx, siteId, {});
      await queueWebApply(tx, jobs, siteId);
      const row = (await sites.findSiteById(tx, siteId)) as sites.SiteRow;
      const event = 'error' in outcome ? (renewal ? 'renewal_failed' : 'failed') : renewal ? 'renewed' : 'issued';
      await siteEvent(tx, `site.certificate.${event}`, row);
      await ops.transition(tx, op.id, ['running'], {
        status: 'error' in outcome ? 'failed' : 'succeeded',
        progress: 100,
        error: 'error' in outcome ? outcome.error : null,
      });
    });
  }

  return (data: Record<string, unknown>) =>
    db.withSessionLock(`certificate.issue:${String(data.site_id)}`, () => issue(String(data.site_id)));
}
