import type { Contribution } from '../../contribution.js';
import { loadServerKey, subkey } from '../../lib/server-key.js';
import type { MailDriver } from '../../provisioning/driver.js';
import type { ServiceDeps } from '../deps.js';
import { configuredIssuer, internalAuthority } from './issuers.js';
import { mailHostCertificate } from './mail-host.js';
import { findHostCertificate } from './repo.js';
import { issuerRoutes } from './routes.js';
import { issuerSchemas } from './schemas.js';

/**
 * The issuers of certificates — Berth's internal CA and the ACME account, chosen by the
 * configuration — and the certificate of the provider's mail host. Sites get the issuer and the
 * key that seals private keys from here.
 */
export function issuersModule(svc: ServiceDeps, mailDriver: MailDriver, onError: (err: unknown) => void) {
  const { db, clock, config } = svc;
  // Private keys of certificates (and of the CA and the ACME account) are sealed with this.
  const sealKey = subkey(loadServerKey(config.secretKey, config.dataDir), 'tls keys');
  const authority = internalAuthority(db, clock, sealKey);
  // A root of its own for the agents' mutual TLS: a site's certificate can never pass as an agent's.
  const agentAuthority = internalAuthority(db, clock, sealKey, 'agents', 'Berth Agent CA');
  const issuer = configuredIssuer(config, db, clock, sealKey, authority);
  const { mailHost } = config;
  const contribution: Contribution = {
    schemas: issuerSchemas,
    routes: (app) => issuerRoutes(app, { authority, mailHost, mailHostCertificate: (host) => findHostCertificate(db, host) }),
    loops: mailHost ? [mailHostCertificate(svc, { host: mailHost, issuer, sealKey, driver: mailDriver }, onError)] : [],
  };
  return { contribution, issuer, sealKey, agentAuthority };
}
