import { readFileSync } from 'node:fs';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { seal, unseal } from '../../lib/sealed.js';
import type { Clock } from '../../lib/time.js';
import { AcmeIssuer } from '../../tls/acme.js';
import { createCertificateAuthority, signWithCertificateAuthority, type CertificateAuthority } from '../../tls/internal-ca.js';
import type { Issuer } from '../../tls/issuer.js';
import { generateKey } from '../../tls/keys.js';
import * as repo from './repo.js';

const INTERNAL = 'internal';

/**
 * Berth's own CA, created on first use and kept in the database (its key sealed), so
 * every process sharing the database signs with the same root.
 */
export function internalAuthority(db: Db, clock: Clock, sealKey: Buffer, name = INTERNAL, commonName = 'Berth Internal Root CA') {
  let cached: CertificateAuthority | undefined;
  return async function authority(): Promise<CertificateAuthority> {
    if (cached) return cached;
    if (!(await repo.findAuthority(db, name))) {
      const fresh = await createCertificateAuthority(commonName, clock.now());
      await repo.insertAuthority(db, name, fresh.certificate_pem, seal(fresh.private_key_pem, sealKey));
    }
    const row = (await repo.findAuthority(db, name)) as { certificate_pem: string; private_key_sealed: string };
    cached = { certificate_pem: row.certificate_pem, private_key_pem: unseal(row.private_key_sealed, sealKey) };
    return cached;
  };
}
export type InternalAuthority = ReturnType<typeof internalAuthority>;

/** The issuer the configuration chooses: ACME when a directory is set, else the internal CA. */
export function configuredIssuer(config: Config, db: Db, clock: Clock, sealKey: Buffer, authority: InternalAuthority): Issuer {
  const { acme } = config;
  if (!acme.directoryUrl) {
    return {
      name: 'internal',
      async issue(names, keyPem) {
        const ca = await authority();
        // The leaf is signed by the root itself: no intermediate to send.
        return { certificate_pem: await signWithCertificateAuthority(ca, names, keyPem, clock.now()), chain_pem: '' };
      },
    };
  }
  const directoryUrl = acme.directoryUrl;
  return new AcmeIssuer(
    {
      directoryUrl,
      email: acme.email,
      eab: acme.eabKid && acme.eabHmacKey ? { kid: acme.eabKid, hmacKey: acme.eabHmacKey } : null,
      caCerts: acme.caFile ? readFileSync(acme.caFile, 'utf8') : null,
    },
    {
      async key() {
        if (!(await repo.findAcmeAccount(db, directoryUrl)))
          await repo.insertAcmeAccount(db, directoryUrl, seal(await generateKey(), sealKey));
        const row = (await repo.findAcmeAccount(db, directoryUrl)) as { private_key_sealed: string; account_url: string | null };
        return { keyPem: unseal(row.private_key_sealed, sealKey), url: row.account_url };
      },
      saveUrl: (url) => repo.setAcmeAccountUrl(db, directoryUrl, url).then(() => undefined),
    },
  );
}
