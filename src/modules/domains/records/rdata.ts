import { isIPv4, isIPv6 } from 'node:net';

/**
 * RDATA rules of the record types beyond RFC 1035's: each returns the canonical presentation
 * form (what the DNS server answers back, so an unchanged set is never rewritten) or the
 * reason it is refused.
 */
export type Checked = { value: string } | { code: string; error: string };

const HEX = /^[0-9a-f]+$/;
const inRange = (v: string | undefined, max: number) => v !== undefined && /^(0|[1-9]\d{0,4})$/.test(v) && Number(v) <= max;
const hex = (parts: string[]) => parts.join('').toLowerCase();

/** DS (RFC 4034 §5.3): key tag, algorithm, digest type, digest (SHA-1 40, SHA-256 64, SHA-384 96 hex digits). */
export function ds(fields: string[]): Checked {
  const [tag, algorithm, type, ...digest] = fields;
  const d = hex(digest);
  const lengths: Record<string, number> = { '1': 40, '2': 64, '4': 96 };
  const want = lengths[type ?? ''];
  if (!inRange(tag, 65535) || !inRange(algorithm, 255) || !want || !HEX.test(d) || d.length !== want)
    return {
      code: 'invalid_ds',
      error: 'must be "<key tag> <algorithm> <digest type 1|2|4> <hex digest of that type\'s length>"',
    };
  return { value: `${Number(tag)} ${Number(algorithm)} ${Number(type)} ${d}` };
}

/** TLSA (RFC 6698 §2): usage 0-3, selector 0-1, matching type 0-2, association data (SHA-256 64, SHA-512 128 hex). */
export function tlsa(fields: string[]): Checked {
  const [usage, selector, matching, ...data] = fields;
  const d = hex(data);
  const want = matching === '1' ? 64 : matching === '2' ? 128 : null;
  const ok =
    inRange(usage, 3) &&
    inRange(selector, 1) &&
    inRange(matching, 2) &&
    HEX.test(d) &&
    d.length % 2 === 0 &&
    (want === null || d.length === want);
  return ok
    ? { value: `${Number(usage)} ${Number(selector)} ${Number(matching)} ${d}` }
    : { code: 'invalid_tlsa', error: 'must be "<usage 0-3> <selector 0-1> <matching type 0-2> <hex data>"' };
}

/** SSHFP (RFC 4255, 6594, 7479, 8709): algorithm 1-4 or 6, fingerprint type 1 (SHA-1, 40) or 2 (SHA-256, 64 hex). */
export function sshfp(fields: string[]): Checked {
  const [algorithm, type, ...fp] = fields;
  const f = hex(fp);
  const ok =
    ['1', '2', '3', '4', '6'].includes(algorithm ?? '') &&
    ['1', '2'].includes(type ?? '') &&
    HEX.test(f) &&
    f.length === (type === '1' ? 40 : 64);
  return ok
    ? { value: `${algorithm} ${type} ${f}` }
    : { code: 'invalid_sshfp', error: 'must be "<algorithm 1|2|3|4|6> <type 1|2> <hex fingerprint>"' };
}

/** SvcParamKeys of RFC 9460 §14.3.2, by number: parameters are written in this order. */
const SVC_KEYS = ['mandatory', 'alpn', 'no-default-alpn', 'port', 'ipv4hint', 'ech', 'ipv6hint'];
const keyNumber = (key: string) =>
  SVC_KEYS.includes(key) ? SVC_KEYS.indexOf(key) : Number(/^key(\d{1,5})$/.exec(key)?.[1] ?? NaN);

function svcParam(raw: string): { key: string; value: string | null } | string {
  const m = /^([a-z0-9-]+)(?:=(.*))?$/i.exec(raw);
  if (!m) return `"${raw}" is not key=value`;
  const key = (m[1] as string).toLowerCase();
  const value = m[2] === undefined ? null : m[2].replace(/^"(.*)"$/, '$1');
  const n = keyNumber(key);
  if (Number.isNaN(n) || n > 65535) return `unknown parameter "${key}"`;
  const list = value?.split(',') ?? [];
  const valid: Record<string, () => boolean> = {
    mandatory: () =>
      list.length > 0 && list.every((k) => !Number.isNaN(keyNumber(k.toLowerCase())) && k.toLowerCase() !== 'mandatory'),
    alpn: () => list.length > 0 && list.every((p) => p.length > 0 && p.length < 256),
    'no-default-alpn': () => value === null,
    port: () => inRange(value ?? undefined, 65535),
    ipv4hint: () => list.length > 0 && list.every((a) => isIPv4(a)),
    ipv6hint: () => list.length > 0 && list.every((a) => isIPv6(a)),
    ech: () => value !== null && /^[A-Za-z0-9+/]+={0,2}$/.test(value),
  };
  if (!(valid[key]?.() ?? value !== null)) return `"${raw}" is not a valid ${key}`;
  const canonical =
    key === 'mandatory'
      ? list.map((k) => k.toLowerCase()).join(',')
      : key.endsWith('hint')
        ? list.map((a) => a.toLowerCase()).join(',')
        : value;
  return { key, value: canonical };
}

/**
 * SVCB and HTTPS (RFC 9460): `<priority> <target> [key=value ...]`. Priority 0 is AliasMode
 * (no parameters); the target is a host name or `.`; parameters are known keys (or keyNNNNN),
 * each once, written in key order; `mandatory` names only keys that are present.
 */
export function svcb(fields: string[], target: (name: string) => string | null): Checked {
  const [priority, rawTarget, ...params] = fields;
  const fail = (why: string): Checked => ({
    code: 'invalid_svcb',
    error: `must be "<priority> <target> [key=value ...]": ${why}`,
  });
  if (!inRange(priority, 65535)) return fail('the priority is 0-65535');
  const host = rawTarget === '.' ? '.' : rawTarget ? target(rawTarget) : null;
  if (!host) return fail('the target is a host name or "."');
  if (Number(priority) === 0 && params.length > 0) return fail('AliasMode (priority 0) takes no parameters');
  const parsed: { key: string; value: string | null }[] = [];
  for (const raw of params) {
    const p = svcParam(raw);
    if (typeof p === 'string') return fail(p);
    if (parsed.some((q) => q.key === p.key)) return fail(`"${p.key}" is given twice`);
    parsed.push(p);
  }
  const mandatory = parsed.find((p) => p.key === 'mandatory')?.value?.split(',') ?? [];
  const missing = mandatory.find((k) => !parsed.some((p) => p.key === k));
  if (missing) return fail(`mandatory names "${missing}", which is not given`);
  parsed.sort((a, b) => keyNumber(a.key) - keyNumber(b.key));
  return { value: [Number(priority), host, ...parsed.map((p) => (p.value === null ? p.key : `${p.key}=${p.value}`))].join(' ') };
}
