import { asciiName } from '../../../lib/domain-name.js';
import type { FieldError } from '../../../lib/errors.js';
import { RECORD_TYPES } from '../../../lib/record-types.js';

/**
 * An RFC 1035 §5 master-file reader for zone import: `$ORIGIN`, `$TTL`, owners omitted
 * (repeating the previous), `@`, relative and absolute names, TTL and class in either order,
 * TTL units (BIND's `1h`, `2d`), parentheses spanning lines, `;` comments outside quotes.
 * `$INCLUDE`, other directives, classes other than IN and unknown types are refused with
 * their line number (a 422 pointing at `/lines/<n>`), so nothing is silently dropped.
 */

export interface ParsedRecord {
  /** Owner relative to the zone (`@` for the apex). */
  name: string;
  type: string;
  ttl: number;
  /** RDATA as written (TXT keeps its quotes; the record rules join them). */
  content: string;
  line: number;
}

const KNOWN_TYPES = new Set<string>(RECORD_TYPES);
/** Where a host name sits in the RDATA of types that carry one. */
const TARGET_POSITION: Record<string, number> = { CNAME: 0, NS: 0, MX: 1, SRV: 3 };
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

function parseTtl(token: string): number | null {
  if (/^\d+$/.test(token)) return Number(token);
  const parts = token.toLowerCase().match(/^(\d+[smhdw])+$/) ? token.toLowerCase().match(/\d+[smhdw]/g) : null;
  return parts ? parts.reduce((sum, p) => sum + Number(p.slice(0, -1)) * (UNIT_SECONDS[p.slice(-1)] as number), 0) : null;
}

/** Splits one logical entry into tokens, keeping quoted strings whole. */
function tokenize(text: string): string[] {
  // A quoted part belongs to the token it touches: `alpn="h2,h3"` (SVCB) is one token.
  return text.match(/(?:"(?:[^"\\]|\\.)*"|[^\s"]+)+/g) ?? [];
}

/** Joins parenthesised entries into logical lines, dropping comments; keeps each entry's first line number. */
function logicalLines(source: string): { text: string; line: number; indented: boolean }[] {
  const out: { text: string; line: number; indented: boolean }[] = [];
  let depth = 0;
  let current: { text: string; line: number; indented: boolean } | null = null;
  const lines = source.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    let text = '';
    let quoted = false;
    for (let j = 0; j < raw.length; j++) {
      const c = raw[j] as string;
      if (c === '\\' && quoted) {
        text += c + (raw[j + 1] ?? '');
        j++;
        continue;
      }
      if (c === '"') quoted = !quoted;
      if (!quoted && c === ';') break;
      if (!quoted && c === '(') {
        depth++;
        text += ' ';
        continue;
      }
      if (!quoted && c === ')') {
        depth = Math.max(0, depth - 1);
        text += ' ';
        continue;
      }
      text += c;
    }
    if (current) current.text += ` ${text}`;
    else current = { text, line: i + 1, indented: /^[ \t]/.test(raw) };
    if (depth === 0) {
      if (current.text.trim()) out.push(current);
      current = null;
    }
  }
  if (current && current.text.trim()) out.push(current);
  return out;
}

export function parseZoneFile(source: string, zone: string): { records: ParsedRecord[]; errors: FieldError[] } {
  const records: ParsedRecord[] = [];
  const errors: FieldError[] = [];
  const fail = (line: number, code: string, detail: string) => errors.push({ pointer: `/lines/${line}`, code, detail });
  let origin = `${zone}.`;
  let defaultTtl = 3600;
  let previousOwner: string | null = null;

  // Unicode labels become A-labels (a label without one stays, and fails validation by name).
  const absolute = (raw: string) => {
    const name = asciiName(raw) ?? raw;
    return name === '@' ? origin : name.endsWith('.') ? name : `${name}.${origin}`;
  };
  const relative = (fqdn: string) =>
    fqdn === `${zone}.` ? '@' : fqdn.endsWith(`.${zone}.`) ? fqdn.slice(0, -(zone.length + 2)) : null;

  for (const { text, line, indented } of logicalLines(source)) {
    const tokens = tokenize(text);
    const first = tokens[0] as string;
    if (first.startsWith('$')) {
      const directive = first.toUpperCase();
      if (directive === '$ORIGIN' && tokens[1]) origin = absolute(tokens[1]);
      else if (directive === '$TTL' && tokens[1] && parseTtl(tokens[1]) !== null) defaultTtl = parseTtl(tokens[1]) as number;
      else if (directive === '$INCLUDE')
        fail(line, 'include_refused', '$INCLUDE is not accepted: import one self-contained file');
      else fail(line, 'unknown_directive', `${first} is not supported`);
      continue;
    }
    let i = 0;
    let owner: string | null = previousOwner;
    if (!indented) {
      owner = absolute(tokens[0] as string);
      i = 1;
    }
    if (owner === null) {
      fail(line, 'missing_owner', 'the first record needs an owner name');
      continue;
    }
    previousOwner = owner;
    let ttl = defaultTtl;
    for (let k = 0; k < 2 && i < tokens.length - 1; k++) {
      const token = tokens[i] as string;
      if (token.toUpperCase() === 'IN') i++;
      else if (/^(CH|HS|CS|ANY)$/i.test(token)) {
        fail(line, 'unsupported_class', `class ${token} is not supported (only IN)`);
        i = tokens.length;
      } else if (parseTtl(token) !== null && !KNOWN_TYPES.has(token.toUpperCase())) {
        ttl = parseTtl(token) as number;
        i++;
      }
    }
    const type = (tokens[i] ?? '').toUpperCase();
    if (i >= tokens.length) continue;
    if (!KNOWN_TYPES.has(type)) {
      fail(line, 'unknown_type', `record type ${tokens[i]} is not supported`);
      continue;
    }
    const name = relative(owner);
    if (name === null) {
      fail(line, 'outside_zone', `${owner} is not inside the zone ${zone}`);
      continue;
    }
    // Names in RDATA are relative to the $ORIGIN in force here, which may not be the apex.
    const rdata = tokens.slice(i + 1);
    const at = TARGET_POSITION[type];
    if (at !== undefined && rdata[at] !== undefined && !rdata[at].endsWith('.')) rdata[at] = absolute(rdata[at]);
    const content = rdata.join(' ');
    if (!content) {
      fail(line, 'missing_rdata', `the ${type} record has no data`);
      continue;
    }
    records.push({ name, type, ttl, content, line });
  }
  return { records, errors };
}
