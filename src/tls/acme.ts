import https from 'node:https';
import { rootCertificates } from 'node:tls';
import * as x509 from '@peculiar/x509';
import * as acme from 'acme-client';
import { pemBlocks } from './certificate.js';
import type { Challenge, ChallengeSolver, IssuedCertificate, Issuer } from './issuer.js';

export interface AcmeOptions {
  directoryUrl: string;
  email: string | null;
  eab: { kid: string; hmacKey: string } | null;
  /** Extra roots to trust for the directory's own HTTPS (a private ACME server, a test one). */
  caCerts: string | null;
}

/** The provider's one ACME account: its key, created on first use, and its URL once registered. */
export interface AcmeAccountStore {
  key(): Promise<{ keyPem: string; url: string | null }>;
  saveUrl(url: string): Promise<void>;
}

/** An order's failure, with the ACME problem's detail as the message. */
class AcmeError extends Error {}

const base64url = (b: Buffer | ArrayBuffer) => Buffer.from(b as ArrayBuffer).toString('base64url');

/** RFC 9773: the certificate's ARI identifier, `base64url(AKI keyIdentifier) "." base64url(serial)`. */
export function ariCertId(pem: string): string | null {
  const cert = new x509.X509Certificate(pem);
  const aki = cert.getExtension(x509.AuthorityKeyIdentifierExtension);
  if (!aki?.keyId) return null;
  // The serial's DER integer bytes: a leading zero octet where the first one's high bit is set.
  const hex = cert.serialNumber.length % 2 ? `0${cert.serialNumber}` : cert.serialNumber;
  const serial = /^[89a-f]/i.test(hex) ? `00${hex}` : hex;
  return `${base64url(Buffer.from(aki.keyId, 'hex'))}.${base64url(Buffer.from(serial, 'hex'))}`;
}

/**
 * RFC 8555 with acme-client: one order per call, HTTP-01 for plain names and DNS-01 for
 * wildcards (the only challenge a CA offers for them). Every proof is put in place before any
 * challenge is answered, so a zone is applied once for all its names. Where the directory
 * offers renewal information (RFC 9773), the suggested window's start becomes the renewal time.
 */
export class AcmeIssuer implements Issuer {
  readonly name = 'acme' as const;

  constructor(
    private readonly o: AcmeOptions,
    private readonly accounts: AcmeAccountStore,
  ) {
    // acme-client talks through its own axios instance; a private CA's directory needs its root.
    if (o.caCerts) acme.axios.defaults.httpsAgent = new https.Agent({ ca: [...rootCertificates, o.caCerts] });
    // Its own retries of an unreachable server last 75 s and end in a TypeError: two short ones
    // are enough, since a failed order is retried with backoff by the renewal loop.
    const defaults = acme.axios.defaults as { acmeSettings?: Record<string, number> };
    Object.assign(defaults.acmeSettings ?? {}, { retryMaxAttempts: 2, retryDefaultDelay: 1 });
  }

  async issue(names: string[], keyPem: string, solver: ChallengeSolver): Promise<IssuedCertificate> {
    try {
      return await this.order(names, keyPem, solver);
    } catch (err) {
      if (err instanceof AcmeError) throw err;
      // acme-client reports a server it could not reach as a TypeError of its own making.
      const reason = err instanceof TypeError ? 'no answer' : err instanceof Error ? err.message : String(err);
      throw new AcmeError(`ACME server ${this.o.directoryUrl}: ${reason}`);
    }
  }

  private async client(): Promise<acme.Client> {
    const account = await this.accounts.key();
    const client = new acme.Client({
      directoryUrl: this.o.directoryUrl,
      accountKey: account.keyPem,
      ...(account.url ? { accountUrl: account.url } : {}),
      ...(this.o.eab ? { externalAccountBinding: this.o.eab } : {}),
      backoffAttempts: 15,
      backoffMin: 500,
      backoffMax: 10_000,
    });
    if (!account.url) {
      await client.createAccount({
        termsOfServiceAgreed: true,
        ...(this.o.email ? { contact: [`mailto:${this.o.email}`] } : {}),
      });
      await this.accounts.saveUrl(client.getAccountUrl());
    }
    return client;
  }

  private async order(names: string[], keyPem: string, solver: ChallengeSolver): Promise<IssuedCertificate> {
    const client = await this.client();
    const order = await client.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) });
    const pending: { challenge: acme.Authorization['challenges'][number]; proof: Challenge }[] = [];
    for (const authz of await client.getAuthorizations(order)) {
      if (authz.status === 'valid') continue;
      const type = authz.wildcard ? 'dns-01' : 'http-01';
      const challenge = authz.challenges.find((c) => c.type === type) ?? authz.challenges.find((c) => c.type === 'dns-01');
      if (!challenge) throw new AcmeError(`the CA offers no HTTP-01 or DNS-01 challenge for ${authz.identifier.value}`);
      const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
      pending.push({
        challenge,
        proof: {
          type: challenge.type,
          identifier: authz.identifier.value,
          token: challenge.token,
          keyAuthorization,
        },
      });
    }
    const proofs = pending.map((p) => p.proof);
    try {
      await solver.present(proofs);
      for (const { challenge } of pending) await client.completeChallenge(challenge);
      await Promise.all(pending.map(({ challenge }) => client.waitForValidStatus(challenge)));
    } catch (err) {
      throw new AcmeError(err instanceof Error ? err.message : String(err));
    } finally {
      await solver.cleanUp(proofs).catch(() => undefined);
    }
    const commonName = names.find((n) => n.length <= 64 && !n.startsWith('*.'));
    const [, csr] = await acme.crypto.createCsr({ ...(commonName ? { commonName } : {}), altNames: names }, keyPem);
    const finalized = await client.finalizeOrder(order, csr);
    const [leaf = '', ...chain] = pemBlocks(await client.getCertificate(finalized));
    return { certificate_pem: leaf, chain_pem: chain.join(''), ...(await this.renewalInfo(leaf)) };
  }

  /** The start of the CA's suggested renewal window, where the directory offers `renewalInfo`. */
  private async renewalInfo(leaf: string): Promise<{ renew_after?: Date }> {
    try {
      const directory = (await acme.axios.get(this.o.directoryUrl)).data as { renewalInfo?: unknown };
      const base = typeof directory.renewalInfo === 'string' ? directory.renewalInfo : null;
      const id = base ? ariCertId(leaf) : null;
      if (!base || !id) return {};
      const res = await acme.axios.get(`${base.replace(/\/$/, '')}/${id}`);
      const start = new Date((res.data as { suggestedWindow?: { start?: string } }).suggestedWindow?.start ?? '');
      return Number.isNaN(start.getTime()) ? {} : { renew_after: start };
    } catch {
      return {};
    }
  }
}
