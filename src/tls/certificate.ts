import { X509Certificate } from 'node:crypto';

/** What Berth shows of a certificate (`GET /v1/sites/{site_id}/certificate`). */
export interface CertificateInfo {
  serial: string;
  names: string[];
  not_before: Date;
  not_after: Date;
  fingerprint_sha256: string;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM bundle, in order, each as its own PEM block. */
export const pemBlocks = (bundle: string): string[] => (bundle.match(PEM_BLOCK) ?? []).map((b) => `${b}\n`);

/** The DNS names of the subjectAltName extension (node prints them as `DNS:a, DNS:b`). */
export function dnsNames(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(/,\s*/)
    .filter((part) => part.startsWith('DNS:'))
    .map((part) => part.slice(4).toLowerCase());
}

export function describeCertificate(pem: string): CertificateInfo {
  const cert = new X509Certificate(pem);
  return {
    serial: cert.serialNumber.toLowerCase(),
    names: dnsNames(cert),
    not_before: new Date(cert.validFrom),
    not_after: new Date(cert.validTo),
    fingerprint_sha256: cert.fingerprint256.replaceAll(':', '').toLowerCase(),
  };
}

/** Whether a certificate name covers a site name: equal, or a wildcard for exactly one more label. */
export function covers(certName: string, name: string): boolean {
  if (certName === name) return true;
  if (!certName.startsWith('*.') || name.startsWith('*.')) return false;
  const dot = name.indexOf('.');
  return dot > 0 && name.slice(dot + 1) === certName.slice(2);
}

/** The names of `wanted` no name of the certificate covers. */
export const uncovered = (certNames: string[], wanted: string[]): string[] =>
  wanted.filter((name) => !certNames.some((c) => covers(c, name)));

/** When to renew: once two thirds of the lifetime has passed, or earlier if the issuer suggests it (ARI). */
export function renewalTime(info: Pick<CertificateInfo, 'not_before' | 'not_after'>, suggested?: Date): Date {
  const { not_before: from, not_after: to } = info;
  const twoThirds = new Date(from.getTime() + ((to.getTime() - from.getTime()) * 2) / 3);
  return suggested && suggested < twoThirds ? suggested : twoThirds;
}

const MINUTE = 60_000;
/**
 * The wait before the next automatic attempt after `failures` failures in a row: 5 minutes
 * after the first (a DNS change may just be spreading), then an hour doubling up to a day — well
 * inside Let's Encrypt's limit of 5 failed validations per name per hour.
 */
export const backoffMs = (failures: number) =>
  failures <= 1 ? 5 * MINUTE : Math.min(60 * MINUTE * 2 ** (failures - 2), 1440 * MINUTE);
