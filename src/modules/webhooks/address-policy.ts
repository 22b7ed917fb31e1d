import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { cidrMatcher, parseCidr } from '../../lib/cidr.js';

/** Resolves a host name to its addresses (injectable: tests make a name resolve to 127.0.0.1). */
export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;
const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

// Where a webhook must never reach: loopback, private, link-local (with the cloud
// metadata address 169.254.169.254), CGNAT (with Alibaba's 100.100.100.200), multicast,
// reserved and documentation ranges; IPv6 unique-local (with AWS's fd00:ec2::254), link-local,
// multicast, and the transition prefixes that embed an IPv4 address (NAT64, 6to4). IPv4-mapped
// addresses (::ffff:a.b.c.d) are not listed: BlockList checks them against the IPv4 ranges.
const FORBIDDEN = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/96',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001::/23',
  '2001:db8::/32',
  '2002::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

export class ForbiddenTarget extends Error {}

/** A write does not wait longer than this for a name to resolve. */
const CREATE_LOOKUP_TIMEOUT_MS = 3000;

export interface Target {
  address: string;
  family: 4 | 6;
}

/**
 * The SSRF rules: `https` only, and no address in FORBIDDEN, unless the host
 * matches BERTH_WEBHOOK_ALLOW_HOSTS (a name, `*.suffix`, or a CIDR for literal addresses);
 * then plain `http` and any address are allowed.
 */
export function addressPolicy(allowHosts: readonly string[], lookup: Lookup = systemLookup) {
  const allowedCidrs = allowHosts.filter((h) => parseCidr(h));
  const inAllowedCidr = cidrMatcher(allowedCidrs);
  const names = allowHosts.filter((h) => !parseCidr(h)).map((h) => h.toLowerCase());
  const forbidden = cidrMatcher(FORBIDDEN);

  const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const exempt = (host: string) =>
    (isIP(host) ? inAllowedCidr(host) : false) ||
    names.some((n) => (n.startsWith('*.') ? host.endsWith(n.slice(1)) : host === n.replace(/\.$/, '')));
  const addressAllowed = (ip: string) => !forbidden(ip);

  return {
    /** What is wrong with a URL as written (no resolution): scheme, credentials, literal address. */
    urlProblems(raw: string): string[] {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return ['must be an absolute URL'];
      }
      const host = hostOf(url);
      const problems: string[] = [];
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && exempt(host)))
        problems.push('must use https (plain http only for hosts in BERTH_WEBHOOK_ALLOW_HOSTS)');
      if (url.username || url.password) problems.push('must not contain credentials');
      if (isIP(host) && !exempt(host) && !addressAllowed(host))
        problems.push(`must not point at ${host}: loopback, private, link-local and metadata addresses are refused`);
      return problems;
    },

    /**
     * When the endpoint is written: a name that resolves to a forbidden address is refused; one
     * that does not resolve (yet) is accepted, and its deliveries fail until it does.
     */
    async resolutionProblem(raw: string): Promise<string | null> {
      const url = new URL(raw);
      if (isIP(hostOf(url)) || exempt(hostOf(url))) return null;
      let timer: NodeJS.Timeout | undefined;
      const slow = new Promise<void>((resolve) => (timer = setTimeout(resolve, CREATE_LOOKUP_TIMEOUT_MS)));
      try {
        await Promise.race([this.resolve(url), slow]);
        return null;
      } catch (err) {
        return err instanceof ForbiddenTarget ? `must not resolve to a forbidden address: ${err.message}` : null;
      } finally {
        clearTimeout(timer);
      }
    },

    /**
     * Resolves the URL's host and vets every address, at delivery time (a name may resolve
     * elsewhere than when the endpoint was created). The caller connects to the returned
     * address, so a second, different resolution cannot slip past.
     */
    async resolve(url: URL): Promise<Target> {
      const host = hostOf(url);
      const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host);
      if (!addresses.length) throw new ForbiddenTarget(`${host} has no address`);
      if (!exempt(host)) {
        const bad = addresses.find((a) => !addressAllowed(a.address) && !inAllowedCidr(a.address));
        if (bad) throw new ForbiddenTarget(`${host} resolves to ${bad.address}, a forbidden address`);
      }
      const first = addresses[0] as { address: string; family: number };
      return { address: first.address, family: first.family === 6 ? 6 : 4 };
    },
  };
}
export type AddressPolicy = ReturnType<typeof addressPolicy>;
