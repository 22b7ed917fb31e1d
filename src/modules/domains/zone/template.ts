import { newId } from '../../../lib/ids.js';
import type { NewRecord } from '../records/repo.js';

/** What new zones are made of, from the provider's configuration. */
export interface ZoneDefaults {
  nameservers: readonly string[];
  webIpv4: string | null;
  webIpv6: string | null;
  /** The provider's mail host (`BERTH_MAIL_HOST`): every mail-enabled domain's MX. */
  mailHost: string | null;
  /** Where `mail.<domain>` points without a mail host, when the web addresses are another server's. */
  mailAddresses?: { ipv4: string | null; ipv6: string | null };
}

export const DEFAULT_TTL = 3600;
export type ZoneTemplate = 'default' | 'empty';

const record = (name: string, type: string, content: string, managed = false): NewRecord => ({
  id: newId('rec'),
  name,
  type,
  ttl: DEFAULT_TTL,
  content,
  managed,
  // Every record a template writes that clients may change is the template's until they do.
  template: !managed,
});

/** SOA: primary nameserver, hostmaster mailbox, serial, refresh 1h, retry 15m, expire 14d, negative TTL 5m. */
export const soaContent = (domain: string, nameservers: readonly string[], serial: number): string =>
  `${nameservers[0] ?? `ns1.${domain}`}. hostmaster.${domain}. ${serial} 3600 900 1209600 300`;

const addresses = (name: string, d: ZoneDefaults): NewRecord[] => [
  ...(d.webIpv4 ? [record(name, 'A', d.webIpv4)] : []),
  ...(d.webIpv6 ? [record(name, 'AAAA', d.webIpv6)] : []),
];

/** The records the API maintains and clients cannot change: SOA and the apex NS set. */
const managedRecords = (domain: string, d: ZoneDefaults, serial: number): NewRecord[] => [
  record('@', 'SOA', soaContent(domain, d.nameservers, serial), true),
  ...d.nameservers.map((ns) => record('@', 'NS', `${ns}.`, true)),
];

/** Web records of the `default` template: `@` and `www` at the provider's web addresses. */
const webRecords = (d: ZoneDefaults): NewRecord[] => [...addresses('@', d), ...addresses('www', d)];

const SPF = 'v=spf1 mx -all';

/**
 * Mail records: an MX and an SPF policy allowing it. The MX is the provider's mail host, or else
 * `mail.<domain>` with the web addresses. With neither, no MX could name a host that exists:
 * none is written (the start-up log says which setting is missing).
 */
export function mailRecords(domain: string, d: ZoneDefaults): NewRecord[] {
  if (d.mailHost) return [record('@', 'MX', `10 ${d.mailHost}.`), record('@', 'TXT', SPF)];
  const mailHost = addresses(
    'mail',
    d.mailAddresses ? { ...d, webIpv4: d.mailAddresses.ipv4, webIpv6: d.mailAddresses.ipv6 } : d,
  );
  return mailHost.length ? [record('@', 'MX', `10 mail.${domain}.`), record('@', 'TXT', SPF), ...mailHost] : [];
}

export function initialRecords(
  domain: string,
  d: ZoneDefaults,
  serial: number,
  template: ZoneTemplate,
  mail: boolean,
): NewRecord[] {
  const records = managedRecords(domain, d, serial);
  if (template === 'default') {
    records.push(...webRecords(d));
    if (mail) records.push(...mailRecords(domain, d));
  }
  return records;
}
