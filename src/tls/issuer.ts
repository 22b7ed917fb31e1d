import { seal } from '../lib/sealed.js';
import { describeCertificate, renewalTime, type CertificateInfo } from './certificate.js';
import { generateKey } from './keys.js';

/** A proof of control the ACME server asks for, for one name. */
export interface Challenge {
  type: 'http-01' | 'dns-01';
  /** The name being proved (`*.` dropped for a wildcard's DNS-01). */
  identifier: string;
  token: string;
  /** HTTP-01: the body to serve at `/.well-known/acme-challenge/<token>`; DNS-01: the TXT value. */
  keyAuthorization: string;
}

/** Puts proofs where the ACME server looks (the web server's challenge directory, the zone) and takes them away. */
export interface ChallengeSolver {
  /** Resolves once every proof is visible to the ACME server. */
  present(challenges: Challenge[]): Promise<void>;
  cleanUp(challenges: Challenge[]): Promise<void>;
}

export interface IssuedCertificate {
  certificate_pem: string;
  chain_pem: string;
  /** The issuer's own renewal suggestion (ACME renewal information), if it has one. */
  renew_after?: Date;
}

/** Something that certifies a key for a set of names: an ACME CA or Berth's own. */
export interface Issuer {
  readonly name: 'acme' | 'internal';
  issue(names: string[], keyPem: string, solver: ChallengeSolver): Promise<IssuedCertificate>;
}

/** A certificate just obtained, ready to store: what it is, when to renew it, its key sealed. */
export interface ObtainedCertificate extends CertificateInfo {
  issuer: Issuer['name'];
  renew_after: Date;
  certificate_pem: string;
  chain_pem: string;
  private_key_sealed: string;
}

/** A new key, certified by `issuer` for `names`, described, with its renewal time (⅔ of its life or ARI). */
export async function obtainCertificate(
  issuer: Issuer,
  names: string[],
  solver: ChallengeSolver,
  sealKey: Buffer,
): Promise<ObtainedCertificate> {
  const keyPem = await generateKey();
  const issued = await issuer.issue(names, keyPem, solver);
  const info = describeCertificate(issued.certificate_pem);
  return {
    issuer: issuer.name,
    ...info,
    renew_after: renewalTime(info, issued.renew_after),
    certificate_pem: issued.certificate_pem,
    chain_pem: issued.chain_pem,
    private_key_sealed: seal(keyPem, sealKey),
  };
}
