/**
 * Realistic examples for the OpenAPI document, generated from the same schemas that validate the
 * requests and serialize the responses (a test validates every example against its schema).
 * A schema's own `examples`, `const`, `default` or `enum` wins; otherwise formats, patterns and
 * the property's name choose a value a hosting customer would recognise.
 */
export type Schema = Record<string, unknown>;
type Resolve = (ref: string) => Schema | undefined;
/** `request`: leave out read-only fields and optional write-only ones (a password beside `generate_password`). */
export type Direction = 'request' | 'response';

const AT = '2026-11-24T09:30:00Z';
const BY_FORMAT: Record<string, string> = {
  'date-time': AT,
  date: '2026-11-24',
  email: 'ada@example.com',
  uri: 'https://hooks.example.com/berth',
  hostname: 'www.example.com',
  ipv4: '192.0.2.10',
  ipv6: '2001:db8::10',
  uuid: '0b3f6c2e-5d7a-4f1b-9c8e-2a4d6f8b0c1e',
};
/** By property name: what the field holds in a real hosting account. */
const BY_NAME: Record<string, string> = {
  address: 'info@example.com',
  contact_email: 'billing@example.com',
  hostname: 'www.example.com',
  domain: 'example.com',
  name: 'example.com',
  display_name: 'Example Ltd',
  username: 'example',
  url: 'https://hooks.example.com/berth',
  content: '192.0.2.10',
  reason: 'Invoice 1042 is 30 days overdue',
  subject: 'Out of office',
  body: 'I am away until Monday and will answer then.',
  cron: '0 3 * * *',
  timezone: 'Europe/Berlin',
  description: 'Orders from the billing system',
  forward_to: 'ada@example.org',
  destinations: 'ada@example.org',
  aliases: 'example.com',
  names: 'www.example.com',
  rua: 'dmarc@example.com',
  detail: 'The request could not be completed.',
  title: 'Not found',
  pointer: '/name',
  code: 'not_found',
  sync_error: 'The DNS server could not be reached.',
  password: 'correct-horse-battery-staple',
  certificate_pem: '-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n',
  private_key_pem: '-----BEGIN PRIVATE KEY-----\nMIIE...\n-----END PRIVATE KEY-----\n',
  request_id: 'req_01jd3x9v6ef8tb2q4w5n7k8m9p',
  next_cursor: 'eyJpZCI6ImFjY18wMWpkM3g5djZlZjh0YjJxNHc1bjdrOG05cCJ9',
  cursor: 'eyJpZCI6ImFjY18wMWpkM3g5djZlZjh0YjJxNHc1bjdrOG05cCJ9',
};
/** Numbers by property name (or its suffix), kept within the schema's bounds. */
const NUMBER_BY_NAME: [RegExp, number][] = [
  [/^ttl$/, 3600],
  [/^retain$/, 7],
  [/^(priority|weight)$/, 10],
  [/^port$/, 443],
  [/^max_execution_time_s$/, 30],
  [/^memory_limit_mb$/, 256],
  [/^upload_max_filesize_mb$/, 64],
  [/^php_workers$/, 5],
  [/^max_database_connections$/, 20],
  [/quota_mb$|_mb$/, 1024],
  [/_bytes$/, 52_428_800],
  [/^max_/, 10],
  [/^progress$/, 100],
];
/** In a response, these are null in the usual case (nothing failed, nothing suspended). */
const NULL_WHEN_NULLABLE = /(^|_)error$|^suspension$|^failure$/;

/** Tried in turn against a pattern when nothing above matches it. */
const POOL = [
  'example',
  'example_shop',
  'php-8.2',
  'static',
  'A',
  'www',
  '@',
  'example.com',
  'sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'berth_',
];

function pickType(s: Schema): string | undefined {
  const t = s.type;
  if (Array.isArray(t)) return (t as string[]).find((x) => x !== 'null') ?? 'null';
  return t as string | undefined;
}

function fits(value: string, s: Schema): boolean {
  if (typeof s.minLength === 'number' && value.length < s.minLength) return false;
  if (typeof s.maxLength === 'number' && value.length > s.maxLength) return false;
  return typeof s.pattern !== 'string' || new RegExp(s.pattern, 'u').test(value);
}

function stringOf(s: Schema, prop: string | undefined): string {
  const pattern = typeof s.pattern === 'string' ? s.pattern : '';
  // A TypeID (`acc_01jd…`): the prefix the pattern names and a fixed, valid suffix.
  const typeid = /^\^\(?([a-z|]+)\)?_\[/.exec(pattern);
  const candidates = [
    typeid ? `${typeid[1]?.split('|')[0]}_01jd3x9v6ef8tb2q4w5n7k8m9p` : undefined,
    typeof s.format === 'string' ? BY_FORMAT[s.format] : undefined,
    prop ? BY_NAME[prop] : undefined,
    ...POOL,
  ];
  for (const c of candidates) if (c !== undefined && fits(c, s)) return c;
  const min = typeof s.minLength === 'number' ? s.minLength : 1;
  return 'x'.repeat(Math.max(min, 1));
}

function numberOf(s: Schema, integer: boolean, prop: string | undefined): number {
  const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 0;
  const max = typeof s.maximum === 'number' ? s.maximum : Number.MAX_SAFE_INTEGER;
  const named = prop ? NUMBER_BY_NAME.find(([re]) => re.test(prop))?.[1] : undefined;
  const guess = Math.min(Math.max(min, named ?? (integer ? 1 : 1.5)), max);
  return integer ? Math.ceil(guess) : guess;
}

/** One example value of `schema`, or undefined where none can be made (an impossible schema). */
export function exampleOf(schema: Schema, resolve: Resolve, direction: Direction, prop?: string, depth = 0): unknown {
  if (depth > 12) return undefined;
  if (typeof schema.$ref === 'string') {
    const target = resolve(schema.$ref);
    return target ? exampleOf(target, resolve, direction, prop, depth + 1) : undefined;
  }
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key] as Schema[] | undefined;
    if (branches) {
      const branch = branches.find((b) => b.type !== 'null') ?? branches[0];
      return branch ? exampleOf(branch, resolve, direction, prop, depth + 1) : null;
    }
  }
  if (Array.isArray(schema.allOf))
    return Object.assign({}, ...(schema.allOf as Schema[]).map((s) => exampleOf(s, resolve, direction, prop, depth + 1)));
  if ('default' in schema && pickType(schema) !== 'object') return schema.default;
  switch (pickType(schema) ?? (schema.properties ? 'object' : undefined)) {
    case 'object':
      return objectOf(schema, resolve, direction, depth);
    case 'array': {
      const item = exampleOf((schema.items as Schema) ?? {}, resolve, direction, prop, depth + 1);
      const count = typeof schema.minItems === 'number' ? schema.minItems : 1;
      return item === undefined ? [] : Array.from({ length: Math.max(count, 1) }, () => item);
    }
    case 'string':
      return stringOf(schema, prop);
    case 'integer':
      return numberOf(schema, true, prop);
    case 'number':
      return numberOf(schema, false, prop);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

const nullable = (s: Schema, resolve: Resolve): boolean =>
  (Array.isArray(s.type) && s.type.includes('null')) ||
  ((s.anyOf ?? s.oneOf) as Schema[] | undefined)?.some(
    (b) => b.type === 'null' || (typeof b.$ref === 'string' && resolve(b.$ref)?.type === 'null'),
  ) === true;

function objectOf(schema: Schema, resolve: Resolve, direction: Direction, depth: number): Record<string, unknown> {
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries((schema.properties as Record<string, Schema>) ?? {})) {
    const s = typeof raw.$ref === 'string' ? (resolve(raw.$ref) ?? raw) : raw;
    if (direction === 'request' && (s.readOnly === true || (s.writeOnly === true && !required.has(name)))) continue;
    if (direction === 'response' && s.writeOnly === true) continue;
    if (direction === 'response' && NULL_WHEN_NULLABLE.test(name) && nullable(s, resolve)) {
      out[name] = null;
      continue;
    }
    const value = exampleOf(raw, resolve, direction, name, depth + 1);
    if (value !== undefined) out[name] = value;
  }
  return out;
}
