import type { Caller } from '../../../auth/caller.js';
import type { Queryable } from '../../../db/client.js';
import { conflict, featureUnavailable, invalid, notFound } from '../../../lib/errors.js';
import { checkVersion, staleVersion } from '../../../lib/if-match.js';
import { seal } from '../../../lib/sealed.js';
import { describeCertificate } from '../../../tls/certificate.js';
import { checkCustomCertificate } from '../../../tls/validate.js';
import { hasFeature, writableAccount } from '../../accounts/index.js';
import type { ServiceDeps } from '../../deps.js';
import { toCertificate } from '../../issuers/index.js';
import * as sites from '../repo.js';
import { siteEvent } from '../representation.js';
import { queueWebApply } from '../unit.js';
import * as repo from './repo.js';
import type { CustomCertificate } from './schemas.js';

/** A plan without `ssl` gets no certificate. */
export const SSL_UNAVAILABLE = () => featureUnavailable('ssl', "The account's plan does not include HTTPS certificates (`ssl`).");

/**
 * The certificate of a site as a sub-resource: read it, upload a custom one, and read
 * the internal CA's root. `load` is the sites service's: the site in the caller's reach, or 404.
 */
export function certificatesService(
  deps: ServiceDeps,
  o: { sealKey: Buffer; load: (caller: Caller, id: string) => Promise<sites.SiteRow> },
) {
  const { db, clock, jobs } = deps;

  return {
    async get(caller: Caller, siteId: string) {
      const site = await o.load(caller, siteId);
      const row = site.tls_mode === 'none' ? undefined : await repo.findCertificate(db, site.id);
      if (!row?.certificate_pem) throw notFound('certificate');
      return toCertificate(row);
    },

    /**
     * Checks and stores an uploaded certificate; the site's mode becomes `custom` and the web
     * server serves it. `expectedVersion` is the site's (If-Match).
     */
    async putCustom(caller: Caller, siteId: string, input: CustomCertificate, expectedVersion?: number) {
      const site = await o.load(caller, siteId);
      const account = await writableAccount(db, caller, site.account_id);
      checkVersion(expectedVersion, site.version);
      if (!hasFeature(account, 'ssl')) throw SSL_UNAVAILABLE();
      if (site.status === 'deleting') throw conflict('invalid_state', 'The site is being deleted.');
      const checked = checkCustomCertificate(input, [site.hostname, ...site.aliases], clock.now());
      if (Array.isArray(checked)) throw invalid(checked, 'The certificate cannot serve this site.');
      const info = describeCertificate(checked.certificate_pem);
      return db.transaction(async (tx: Queryable) => {
        await repo.saveIssued(tx, site.id, {
          issuer: 'custom',
          ...info,
          renew_after: null,
          certificate_pem: checked.certificate_pem,
          chain_pem: checked.chain_pem,
          private_key_sealed: seal(checked.private_key_pem, o.sealKey),
        });
        // Guarded by the version read (and checked against If-Match) above, like every site write.
        if (!(await sites.updateSite(tx, site.id, { tls_mode: 'custom' }, site.version))) throw staleVersion();
        await queueWebApply(tx, jobs, site.id);
        await siteEvent(tx, 'site.certificate.issued', (await sites.findSiteById(tx, site.id)) as sites.SiteRow);
        return toCertificate((await repo.findCertificate(tx, site.id)) as repo.CertificateRow);
      });
    },
  };
}
export type CertificatesService = ReturnType<typeof certificatesService>;
