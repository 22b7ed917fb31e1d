/**
 * The DNS record types Berth serves, in the order a zone file lists them (SOA first, then the
 * delegation, the addresses, the rest). The API, the zone-file reader and the renderers use
 * this one list; the database's check constraint repeats it (migration 0016).
 */
export const RECORD_TYPES = [
  'SOA',
  'NS',
  'DS',
  'A',
  'AAAA',
  'ALIAS',
  'CNAME',
  'MX',
  'TXT',
  'SRV',
  'CAA',
  'HTTPS',
  'SVCB',
  'TLSA',
  'SSHFP',
  'PTR',
] as const;
export type RecordType = (typeof RECORD_TYPES)[number];
