import { RECORD_TYPES } from '../../lib/record-types.js';

/** A zone as the DNS drivers receive it: the whole apply unit, rendered from the database. */
interface ZoneRecord {
  name: string;
  type: string;
  ttl: number;
  content: string;
}

/**
 * How a signed zone is signed: with Berth's keys (the private key in BIND's Private-key-format),
 * NSEC or NSEC3 (no salt, no extra iterations: RFC 9276), and what the zone tells its parent
 * through CDS/CDNSKEY (RFC 7344): its keys, the delete records of RFC 8078, or nothing.
 */
export interface ZoneSigning {
  keys: { flags: number; algorithm: number; publicKey: string; privateKey: string }[];
  denial: 'nsec' | 'nsec3';
  cds: 'publish' | 'delete' | 'none';
}

export interface Zone {
  /** The zone's A-label name, without the trailing dot. */
  name: string;
  serial: number;
  records: ZoneRecord[];
  /** Absent: the zone is served unsigned. */
  dnssec?: ZoneSigning;
}

const quote = (bytes: Uint8Array): string => {
  let out = '';
  for (const b of bytes) {
    if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
    else if (b < 0x20 || b > 0x7e) out += `\\${String(b).padStart(3, '0')}`;
    else out += String.fromCharCode(b);
  }
  return `"${out}"`;
};

/** TXT text as RFC 1035 character-strings: quoted, escaped, split into ≤ 255-octet pieces. */
export function txtPresentation(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const pieces: string[] = [];
  let start = 0;
  do {
    let end = Math.min(start + 255, bytes.length);
    // Never cut a UTF-8 sequence in half: back up to the first byte of the character.
    while (end < bytes.length && end > start && ((bytes[end] as number) & 0xc0) === 0x80) end--;
    pieces.push(quote(bytes.subarray(start, end)));
    start = end;
  } while (start < bytes.length);
  return pieces.join(' ');
}

const TYPE_RANK = new Map<string, number>(RECORD_TYPES.map((t, i) => [t, i]));
const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * SOA first; then by owner (apex first), type, content. The keys are made once per record, not
 * per comparison: a zone of 10,000 records sorts in a few milliseconds.
 */
function sorted(records: ZoneRecord[]): ZoneRecord[] {
  const keyed = records.map((r) => ({
    r,
    soa: r.type === 'SOA' ? 0 : 1,
    owner: r.name === '@' ? '' : r.name,
    rank: TYPE_RANK.get(r.type) ?? -1,
  }));
  keyed.sort((a, b) => a.soa - b.soa || byString(a.owner, b.owner) || a.rank - b.rank || byString(a.r.content, b.r.content));
  return keyed.map((k) => k.r);
}

/**
 * An RFC 1035 master file that `named-checkzone` accepts: `$ORIGIN`, `$TTL`, the SOA first,
 * then every other record by owner and type. Deterministic: a zone always renders to the same
 * bytes, so an unchanged zone is never rewritten.
 */
export function renderZoneFile(zone: Zone): string {
  const lines = [`$ORIGIN ${zone.name}.`, '$TTL 3600'];
  for (const r of sorted(zone.records)) {
    const content = r.type === 'TXT' ? txtPresentation(r.content) : r.content;
    lines.push(`${r.name}\t${r.ttl}\tIN\t${r.type}\t${content}`);
  }
  return lines.join('\n') + '\n';
}
