import { BlockList, isIP } from 'node:net';

/** Parses `10.0.0.0/8`, `2001:db8::/32` or a bare address; null when invalid. */
export function parseCidr(value: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address = '', prefixText, ...rest] = value.split('/');
  if (rest.length) return null;
  const version = isIP(address);
  if (!version) return null;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return null;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A matcher over a list of CIDRs; IPv4-mapped IPv6 addresses match IPv4 ranges. */
export function cidrMatcher(cidrs: readonly string[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const c of cidrs) {
    const parsed = parseCidr(c);
    if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  return (ip: string) => {
    const plain = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
    const family = isIP(plain) === 4 ? 'ipv4' : 'ipv6';
    return isIP(plain) !== 0 && list.check(plain, family);
  };
}

/**
 * Whether every address of `inner` lies in one of `outers`: a range holds a block when it is no
 * narrower and holds the block's address (both are aligned on their prefixes).
 */
export function cidrWithin(inner: string, outers: readonly string[]): boolean {
  const block = parseCidr(inner);
  if (!block) return false;
  return outers.some((c) => {
    const outer = parseCidr(c);
    if (!outer || outer.family !== block.family || outer.prefix > block.prefix) return false;
    const range = new BlockList();
    range.addSubnet(outer.address, outer.prefix, outer.family);
    return range.check(block.address, block.family);
  });
}
