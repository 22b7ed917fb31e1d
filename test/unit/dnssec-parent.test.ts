import { afterAll, beforeAll, expect, it } from 'vitest';
import { parentDs } from '../../src/modules/domains/dnssec/parent.js';
import { parentDnsServer } from '../helpers/parent-dns.js';

let parent: Awaited<ReturnType<typeof parentDnsServer>>;
beforeAll(async () => {
  parent = await parentDnsServer();
});
afterAll(() => parent.close());

const ds = { key_tag: 2371, algorithm: 13, digest_type: 2, digest: 'AB'.repeat(32) };
const ask = (zone: string) => {
  const [host, port] = parent.address.split(':') as [string, string];
  return parentDs(zone, host, Number(port));
};

it('reads the DS records a parent answers with, and the TTL of each', async () => {
  parent.published.set('ttl.example', { ...ds, ttl: 86_400 });
  expect(await ask('ttl.example')).toEqual([{ ...ds, ttl: 86_400 }]);
  expect(await ask('none.example')).toEqual([]);
});

it('counts a TTL with its top bit set as 0 (RFC 2181, 8)', async () => {
  parent.published.set('top-bit.example', { ...ds, ttl: 0x80000001 });
  expect(await ask('top-bit.example')).toEqual([{ ...ds, ttl: 0 }]);
});
