import { isIPv4, isIPv6 } from 'node:net';
import { asciiName } from '../../../lib/domain-name.js';
import type { FieldError } from '../../../lib/errors.js';
import { RECORD_TYPES } from '../../../lib/record-types.js';
import { DEFAULT_TTL } from '../zone/template.js';
import { ds, sshfp, svcb, tlsa } from './rdata.js';
import type { ZoneEntry } from './repo.js';
import type { CreateRecord } from './schemas.js';

/** DNS record rules, as pure functions: one record, then the set it lands in. */

/** Every type but SOA, which the API maintains. */
const WRITABLE_TYPES = RECORD_TYPES.filter((t) => t !== 'SOA');

/** A record as a client writes it; an imported zone file's may name any type (refused here). */
export type RecordInput = Omit<CreateRecord, 'type'> & { type: string };

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const U16 = /^(0|[1-9]\d{0,4})$/;

const err = (pointer: string, code: string, detail: string): FieldError => ({ pointer, code, detail });

/** An owner name relative to the zone (`@`, `www`, `*.dev`), from relative or absolute input. */
function relativeOwner(zone: string, raw: string): { name: string } | { error: string; code: string } {
  const ascii = asciiName(raw.trim());
  if (ascii === null) return { code: 'invalid_name', error: 'holds a label that is not a valid internationalised name' };
  let name = ascii;
  if (name === '' || name === '@' || name === `${zone}.`) return { name: '@' };
  if (name.endsWith('.')) {
    if (!name.endsWith(`.${zone}.`)) return { code: 'outside_zone', error: `must be inside the zone ${zone}` };
    name = name.slice(0, -(zone.length + 2));
  }
  const labels = name.split('.');
  if (`${name}.${zone}`.length > 253) return { code: 'too_long', error: 'the full name must be at most 253 characters' };
  for (const [i, label] of labels.entries()) {
    if (label === '*') {
      if (i !== 0) return { code: 'invalid_wildcard', error: '`*` is allowed only as the whole leftmost label' };
      continue;
    }
    if (label.length > 63) return { code: 'label_too_long', error: `label "${label}" is longer than 63 characters` };
    if (!LABEL.test(label))
      return { code: 'invalid_name', error: `label "${label}" may hold letters, digits, hyphens and underscores` };
  }
  return { name };
}

/**
 * A host name target (MX, NS, SRV, CNAME), stored absolute: `mail` and `@` are resolved
 * against the zone, so the same record always reads (and exports) the same way. Unicode labels
 * are stored as their A-labels, like owner names and domains.
 */
function hostTarget(value: string, zone: string): string | null {
  const v = asciiName(value);
  if (v === null) return null;
  if (v === '@') return `${zone}.`;
  if (isIPv4(v.replace(/\.$/, '')) || isIPv6(v)) return null;
  const bare = v.endsWith('.') ? v.slice(0, -1) : v;
  if (bare.length === 0 || bare.length > 253) return null;
  if (!bare.split('.').every((l) => HOST_LABEL.test(l) || /^_[a-z0-9-]+$/.test(l))) return null;
  return v.endsWith('.') ? v : `${v}.${zone}.`;
}

const QUOTED_STRINGS = /^\s*"(?:[^"\\]|\\.)*"(?:\s+"(?:[^"\\]|\\.)*")*\s*$/s;

/** Joins `"a" "b"` into `ab` (presentation form); plain text stays as given. */
export function unquoteTxt(value: string): string {
  if (!QUOTED_STRINGS.test(value)) return value;
  return (value.match(/"(?:[^"\\]|\\.)*"/g) ?? []).map((p) => p.slice(1, -1).replace(/\\(["\\])/g, '$1')).join('');
}

function content(type: string, raw: string, owner: string, zone: string): { value: string } | { code: string; error: string } {
  const v = raw.trim();
  const fields = v.split(/\s+/);
  switch (type) {
    case 'A':
      return isIPv4(v) ? { value: v } : { code: 'invalid_ipv4', error: 'must be an IPv4 address in dotted-quad form' };
    case 'AAAA':
      return isIPv6(v) ? { value: v.toLowerCase() } : { code: 'invalid_ipv6', error: 'must be an IPv6 address' };
    case 'CNAME':
    case 'NS':
    case 'PTR':
    case 'ALIAS': {
      const host = fields.length === 1 ? hostTarget(v, zone) : null;
      return host ? { value: host } : { code: 'invalid_target', error: 'must be a host name, not an IP address' };
    }
    case 'DS':
      return owner === '@'
        ? { code: 'ds_at_apex', error: "DS records go at a delegated child's name, not the apex" }
        : ds(fields);
    case 'TLSA':
      return /^_\d{1,5}\._(tcp|udp|sctp)(\.|$)/.test(owner)
        ? tlsa(fields)
        : { code: 'invalid_tlsa_owner', error: 'TLSA owner names start with _port._proto (RFC 6698 §3), e.g. _443._tcp.www' };
    case 'SSHFP':
      return sshfp(fields);
    case 'SVCB':
    case 'HTTPS':
      return svcb(fields, (name) => hostTarget(name, zone));
    case 'MX': {
      const host =
        fields.length === 2 && U16.test(fields[0] as string) && Number(fields[0]) <= 65535
          ? hostTarget(fields[1] as string, zone)
          : null;
      return host
        ? { value: `${Number(fields[0])} ${host}` }
        : { code: 'invalid_mx', error: 'must be "<preference 0-65535> <host name>"' };
    }
    case 'SRV': {
      if (!/^_[a-z0-9-]+\._(tcp|udp|tls|sctp)(\.|$)/.test(owner)) {
        return { code: 'invalid_srv_owner', error: 'SRV owner names start with _service._proto' };
      }
      const nums = fields.slice(0, 3);
      const target = fields[3] === '.' ? '.' : hostTarget(fields[3] ?? '', zone);
      const ok = fields.length === 4 && nums.every((n) => U16.test(n) && Number(n) <= 65535) && target;
      return ok
        ? { value: `${nums.map(Number).join(' ')} ${target}` }
        : { code: 'invalid_srv', error: 'must be "<priority> <weight> <port> <target>"' };
    }
    case 'CAA': {
      const m = /^(0|128)\s+(issue|issuewild|iodef)\s+(".*"|\S+)$/i.exec(v);
      if (!m) return { code: 'invalid_caa', error: 'must be "<flags 0|128> <issue|issuewild|iodef> <value>"' };
      const value = (m[3] as string).startsWith('"') ? (m[3] as string) : `"${m[3]}"`;
      return { value: `${m[1]} ${(m[2] as string).toLowerCase()} ${value}` };
    }
    case 'TXT': {
      const text = unquoteTxt(raw);
      return Buffer.byteLength(text) <= 65_000
        ? { value: text }
        : { code: 'too_long', error: 'TXT data is limited to 65,000 octets' };
    }
    default:
      return { code: 'invalid_type', error: `must be one of ${WRITABLE_TYPES.join(', ')}` };
  }
}

/** The least TTL a record written through the API may have (a move lowers below it for its duration). */
export const MIN_TTL = 60;

export const ttlOutOfRange = (pointer: string): FieldError =>
  err(`${pointer}/ttl`, 'out_of_range', `must be between ${MIN_TTL} and 86400 seconds`);

/** One record: owner, type and content in canonical form, or every field error at once. */
export function normalizeRecord(zone: string, input: RecordInput, pointer = ''): { record?: ZoneEntry; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const type = input.type.toUpperCase();
  const owner = relativeOwner(zone, input.name);
  if ('error' in owner) errors.push(err(`${pointer}/name`, owner.code, owner.error));
  if (!(WRITABLE_TYPES as string[]).includes(type)) {
    errors.push(
      err(
        `${pointer}/type`,
        type === 'SOA' ? 'managed' : 'invalid_type',
        type === 'SOA' ? 'SOA is maintained by the API' : `must be one of ${WRITABLE_TYPES.join(', ')}`,
      ),
    );
    return { errors };
  }
  if ('error' in owner) return { errors };
  if (type === 'NS' && owner.name === '@')
    errors.push(err(`${pointer}/name`, 'managed', 'the apex NS set is maintained by the API'));
  if (type === 'CNAME' && owner.name === '@')
    errors.push(err(`${pointer}/name`, 'cname_at_apex', 'a CNAME cannot be at the zone apex (RFC 1034 §3.6.2)'));
  const ttl = input.ttl ?? DEFAULT_TTL;
  if (!Number.isInteger(ttl) || ttl < MIN_TTL || ttl > 86400) errors.push(ttlOutOfRange(pointer));
  const c = content(type, input.content, owner.name, zone);
  if ('error' in c) errors.push(err(`${pointer}/content`, c.code, c.error));
  if (errors.length || 'error' in c) return { errors };
  return { record: { name: owner.name, type, ttl, content: c.value }, errors };
}

/** One RRset: how often each content stands in it, its TTL (and another if two are seen), how many SPF policies. */
interface RRset {
  contents: Map<string, number>;
  ttl: number;
  otherTtl?: number;
  spf: number;
}
/** What stands at one owner name: how many records, and its RRsets by type. */
interface Owner {
  count: number;
  sets: Map<string, RRset>;
}
const isSpf = (r: ZoneEntry) => r.type === 'TXT' && /^v=spf1(\s|$)/i.test(r.content);

const fqdnOf = (zone: string, name: string) => (name === '@' ? `${zone}.` : `${name}.${zone}.`);

/**
 * The rules that concern a set, checked on the zone as it would be after the change:
 * CNAME alone at its name, one TTL per RRset, no duplicates, one SPF policy per name, MX/NS/SRV
 * targets that are not CNAMEs inside the zone. Errors point at the changed records
 * (`changed` maps a record to its pointer in the request).
 */
export function checkZone(zone: string, records: ZoneEntry[], changed: Map<ZoneEntry, string>): FieldError[] {
  const errors: FieldError[] = [];
  // Indexed once (owner → type → RRset), so each changed record is checked in constant time:
  // a zone of 20,000 records at one name costs no more than 20,000 names.
  const owners = new Map<string, Owner>();
  const cnames = new Set<string>();
  for (const r of records) {
    let owner = owners.get(r.name);
    if (!owner) owners.set(r.name, (owner = { count: 0, sets: new Map() }));
    owner.count++;
    let set = owner.sets.get(r.type);
    if (!set) owner.sets.set(r.type, (set = { contents: new Map(), ttl: r.ttl, spf: 0 }));
    set.contents.set(r.content, (set.contents.get(r.content) ?? 0) + 1);
    if (r.ttl !== set.ttl) set.otherTtl = r.ttl;
    if (isSpf(r)) set.spf++;
    if (r.type === 'CNAME') cnames.add(fqdnOf(zone, r.name));
  }

  for (const [r, pointer] of changed) {
    // A changed record is normally in the zone; one a later part of the same edit removed is not.
    const owner = owners.get(r.name) ?? { count: 0, sets: new Map<string, RRset>() };
    const set = owner.sets.get(r.type);
    if (r.type === 'CNAME' && owner.count > 1) {
      errors.push(
        err(`${pointer}/name`, 'cname_conflict', `a CNAME must be the only record at ${fqdnOf(zone, r.name)} (RFC 2181 §10.1)`),
      );
    } else if (r.type !== 'CNAME' && owner.sets.has('CNAME')) {
      errors.push(err(`${pointer}/name`, 'cname_conflict', `${fqdnOf(zone, r.name)} already has a CNAME`));
    }
    if ((set?.contents.get(r.content) ?? 0) > 1) {
      errors.push(
        err(`${pointer}/content`, 'duplicate', `the ${r.type} set at ${fqdnOf(zone, r.name)} already holds this record`),
      );
    }
    const otherTtl = set && r.ttl !== set.ttl ? set.ttl : set?.otherTtl;
    if (otherTtl !== undefined) {
      errors.push(
        err(
          `${pointer}/ttl`,
          'ttl_mismatch',
          `the ${r.type} set at ${fqdnOf(zone, r.name)} has TTL ${otherTtl}; records of a set share one TTL`,
        ),
      );
    }
    if (isSpf(r) && (set?.spf ?? 0) > 1) {
      errors.push(
        err(`${pointer}/content`, 'duplicate_spf', `${fqdnOf(zone, r.name)} already has an SPF policy (RFC 7208 §4.5)`),
      );
    }
    const types = owner.sets;
    // ALIAS stands for the name's addresses (the server answers A/AAAA from its target): one per
    // name, and no addresses of its own beside it.
    if (
      (r.type === 'ALIAS' && (types.has('A') || types.has('AAAA') || (set?.contents.size ?? 0) > 1)) ||
      ((r.type === 'A' || r.type === 'AAAA') && types.has('ALIAS'))
    ) {
      errors.push(
        err(`${pointer}/type`, 'alias_conflict', `${fqdnOf(zone, r.name)} may hold one ALIAS and no A or AAAA beside it`),
      );
    }
    if (r.type === 'DS' && !types.has('NS')) {
      errors.push(
        err(
          `${pointer}/name`,
          'ds_without_delegation',
          `DS belongs to a delegation: add the NS records of ${fqdnOf(zone, r.name)} first`,
        ),
      );
    }
    const target = r.type === 'MX' || r.type === 'SRV' ? r.content.split(' ').at(-1) : r.type === 'NS' ? r.content : null;
    if (target && target !== '.' && cnames.has(target)) {
      errors.push(err(`${pointer}/content`, 'target_is_cname', `${r.type} targets must not be CNAMEs (RFC 2181 §10.3)`));
    }
  }
  return errors;
}
