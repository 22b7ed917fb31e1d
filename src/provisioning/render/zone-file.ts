import { RECORD_TYPES } from '../../lib/record-types.js';

/** A zone as the DNS drivers receive it: the whole apply unit, rendered from the database. */
interface ZoneRecord {
  name: string;
  type: string;
  ttl: number;
  content: string;
}

export interface Zone {
  /** The zone's A-label name, without the trailing dot. */
  name: string;
  serial: number;
  records: ZoneRecord[];
}

const TYPE_ORDER: readonly string[] = RECORD_TYPES;

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

/** SOA first; then by owner (apex first), type, content. */
const sortKey = (r: ZoneRecord): [number, string, number, string] => [
  r.type === 'SOA' ? 0 : 1,
  r.name === '@' ? '' : r.name,
  TYPE_ORDER.indexOf(r.type),
  r.content,
];

function compare(a: ZoneRecord, b: ZoneRecord): number {
  const [x, y] = [sortKey(a), sortKey(b)];
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== y[i]) return (x[i] as string | number) < (y[i] as string | number) ? -1 : 1;
  }
  return 0;
}

/**
 * An RFC 1035 master file that `named-checkzone` accepts: `$ORIGIN`, `$TTL`, the SOA first,
 * then every other record by owner and type. Deterministic: a zone always renders to the same
 * bytes, so an unchanged zone is never rewritten.
 */
export function renderZoneFile(zone: Zone): string {
  const lines = [`$ORIGIN ${zone.name}.`, '$TTL 3600'];
  for (const r of [...zone.records].sort(compare)) {
    const content = r.type === 'TXT' ? txtPresentation(r.content) : r.content;
    lines.push(`${r.name}\t${r.ttl}\tIN\t${r.type}\t${content}`);
  }
  return lines.join('\n') + '\n';
}
