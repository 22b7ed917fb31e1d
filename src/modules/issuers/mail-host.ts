import { periodic } from '../../jobs/periodic.js';
import { acmeChallengeDir } from '../../layout.js';
import { publicMessage } from '../../lib/errors.js';
import { unseal } from '../../lib/sealed.js';
import type { MailDriver } from '../../provisioning/driver.js';
import { backoffMs } from '../../tls/certificate.js';
import { httpProofs } from '../../tls/http-proofs.js';
import { obtainCertificate, type Issuer } from '../../tls/issuer.js';
import type { ServiceDeps } from '../deps.js';
import * as repo from './repo.js';

/** A claimed attempt is not claimed again for this long, unless it records an outcome first. */
const CLAIM_MS = 60 * 60_000;

/**
 * The mail host's certificate (submission with STARTTLS), in every process: obtained
 * from the configured issuer like a site's — the first time, at two thirds of its life (or the
 * issuer's suggestion), and after a failure once the sites' backoff has passed, while the older
 * one stays served. A claim on the row makes each attempt happen once however many processes
 * look. Each run hands the current certificate to the mail driver, which writes and reloads only
 * when it differs from what it serves (a rebuilt mail server gets it back within a run).
 *
 * With ACME the proof is HTTP-01: the mail host's name must reach a server block of the web
 * server (every block serves the challenge directory), e.g. a site for the webmail on that name.
 */
export function mailHostCertificate(
  deps: ServiceDeps,
  o: { host: string; issuer: Issuer; sealKey: Buffer; driver: MailDriver },
  onError: (err: unknown) => void,
) {
  const { db, clock, config } = deps;
  const solver = httpProofs(acmeChallengeDir(config.dataDir));

  async function obtain(failures: number): Promise<void> {
    try {
      await repo.saveHostCertificate(db, o.host, await obtainCertificate(o.issuer, [o.host], solver, o.sealKey));
    } catch (err) {
      const error = {
        code: 'certificate_failed',
        title: 'The certificate could not be obtained',
        detail: publicMessage(err),
      };
      await repo.saveHostFailure(db, o.host, error, new Date(clock.now().getTime() + backoffMs(failures + 1)));
      onError(err);
    }
  }

  async function tick(): Promise<void> {
    const now = clock.now();
    const claimed = await repo.claimHostCertificate(db, o.host, now, new Date(now.getTime() + CLAIM_MS));
    if (claimed) await obtain(claimed.failures);
    const row = await repo.findHostCertificate(db, o.host);
    if (row?.certificate_pem && row.private_key_sealed)
      await o.driver.useCertificate(row.certificate_pem + row.chain_pem, unseal(row.private_key_sealed, o.sealKey));
  }

  return periodic(tick, config.certificateSchedulerMs, onError);
}
