import type { ErrorCode } from '../lib/errors.js';
import { problemBody } from './errors.js';
import { KEY_PATTERN } from './idempotency.js';
import { exampleOf, type Direction, type Schema } from './openapi-examples.js';
import { PROBLEMS } from './problems.js';

/**
 * The conventions every operation shares, written into the generated document once: the shared
 * error responses, the request headers (`Idempotency-Key`, `If-Match`,
 * `If-None-Match`), the response headers the shared plugins send, a description for every
 * parameter, and an example for every body.
 */

const header = (description: string, schema: Schema = { type: 'string', maxLength: 500 }) => ({ description, schema });

const HEADERS = {
  'X-Request-Id': header(
    "This request's id (also in every problem's `request_id` and in the logs): the sender's own `X-Request-Id` when it is 1-128 of `A-Za-z0-9._:@-`, else a new `req_` id.",
  ),
  'Access-Control-Allow-Origin': header('Always `*`: tokens are bearer headers, never cookies.', {
    type: 'string',
    const: '*',
  }),
  RateLimit: header('Remaining quota (IETF draft, structured field).'),
  'RateLimit-Policy': header('The quota policy (IETF draft, structured field).'),
  'Retry-After': header('Seconds to wait before sending again.', {
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: 86400,
  }),
  ETag: header('The strong validator of the representation (`"<version>"`): send it back in `If-Match` or `If-None-Match`.'),
  Location: header('Where the created resource (201) or the operation that tracks the work (202) is.'),
  Link: header('RFC 8288: `<...>; rel="next"` while there is a next page.'),
  'Idempotent-Replayed': header(
    '`true` when this is the stored response of an earlier request with the same `Idempotency-Key`.',
    {
      type: 'string',
      const: 'true',
    },
  ),
};

const PARAMETERS = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Any 1-255 printable ASCII characters, unique per intended change (a UUID). A retry with the same key within 24 hours gets the first response again (`Idempotent-Replayed: true`) instead of doing the work twice; the same key with another body is a 422.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: KEY_PATTERN.source },
    example: '5f2b1c7e-8d3a-4b6f-9e0a-1c2d3e4f5a6b',
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'The `ETag` of the version the change was made against (`"3"`): the request is refused with 412 when the resource has changed since. `*` matches any version.',
    schema: { type: 'string', maxLength: 200 },
    example: '"3"',
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'The `ETag` the client holds: 304 without a body while it is still current.',
    schema: { type: 'string', maxLength: 200 },
    example: '"3"',
  },
};

/** The problems every operation may answer, with the code an example of each carries. */
const STANDARD_ERRORS: Record<string, [string, ErrorCode]> = {
  '400': ['Malformed request (bad JSON, bad or unknown query parameter, bad header).', 'malformed_request'],
  '401': ['Missing, invalid, expired or revoked token.', 'unauthenticated'],
  '403': ['Insufficient scope, forbidden for this principal, suspended, or quota exceeded.', 'insufficient_scope'],
  '404': ["Not found or outside the token's reach.", 'not_found'],
  '406': ['The `Accept` header rules out JSON.', 'not_acceptable'],
  '429': ['Rate limited.', 'rate_limited'],
  '500': ['Internal error.', 'internal_error'],
  '503': [
    'The server is stopping, cannot reach its database, or rolled the request back in a conflict with a concurrent one: retry after `Retry-After`.',
    'unavailable',
  ],
};
const BODY_ERRORS: Record<string, [string, ErrorCode]> = {
  '413': ['Body too large.', 'payload_too_large'],
  '415': ['Unsupported Content-Type; `accepted_types` lists the media types this operation reads.', 'unsupported_media_type'],
  '422': ['Validation failed; every field error listed.', 'validation_failed'],
};
const PRECONDITION: [string, ErrorCode] = ['`If-Match` does not match the current ETag.', 'precondition_failed'];
const CONFLICT: [string, ErrorCode] = ['Conflict with the current state.', 'invalid_state'];

/** Query filters many lists share; a route's own description wins. */
const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  account_id: 'Only those of this hosting account.',
  reseller_id: 'Only those of this reseller.',
  plan_id: 'Only accounts on this plan.',
  status: 'Only those in this status.',
  name: 'Only the one with exactly this name.',
  username: 'Only the account with exactly this username.',
  updated_since: 'Only those changed at or after this time (RFC 3339).',
  since: 'Only those that happened at or after this time (RFC 3339).',
  resource_id: 'Only those about this resource (any id).',
  type: 'Only those of this type.',
  event_type: 'Only deliveries of this event type.',
  enabled: 'Only enabled (`true`) or disabled (`false`) ones.',
  cascade: 'Also delete what the domain holds (records, mailboxes, forwarders, sites) instead of refusing with 409 `in_use`.',
  dry_run: 'Compute and return the changes without applying them.',
  domain: "The domain's id (`dom_...`) or its name (Unicode or A-label).",
};

type Operation = {
  operationId?: string;
  /** Problem codes a route answers beyond the conventions (`precondition_required`), named in its schema. */
  'x-errors'?: ErrorCode[];
  parameters?: Schema[];
  requestBody?: { content?: Record<string, Schema> };
  responses?: Record<string, Schema>;
  security?: unknown[];
};

const ref = (kind: 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const isHeaderParam = (p: Schema, name: string) => p.in === 'header' && String(p.name).toLowerCase() === name;

/** The body the error handler sends for `code` (its documentation as the detail). */
const problemExample = (code: ErrorCode, base: string): Schema => ({
  ...problemBody(
    base,
    code,
    PROBLEMS[code].description,
    'req_01jd3x9v6ef8tb2q4w5n7k8m9p',
    '/v1/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p',
  ),
  ...(code === 'validation_failed'
    ? { errors: [{ pointer: '/contact_email', code: 'invalid_format', detail: 'must be an email address' }] }
    : {}),
});

function problemResponse([description, code]: [string, ErrorCode], base: string): Schema {
  return {
    description,
    content: {
      'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' }, example: problemExample(code, base) },
    },
  };
}

/** The schema a body's `$ref` names, to see whether it is a versioned resource or a page. */
function bodySchema(response: Schema | undefined, resolve: (r: string) => Schema | undefined): Schema | undefined {
  const content = response?.content as Record<string, Schema> | undefined;
  const schema = content?.['application/json']?.schema as Schema | undefined;
  return schema && typeof schema.$ref === 'string' ? resolve(schema.$ref) : schema;
}

export interface DecorateOptions {
  /** `servers[0].url`: the configured base URL, else the listener. */
  serverUrl: string;
  /** No public address is configured: `serverUrl` is the listener. */
  local: boolean;
}

interface Document {
  components?: { schemas?: Record<string, Schema>; headers?: Schema; parameters?: Schema };
  paths?: Record<string, Record<string, Operation>>;
  servers?: unknown[];
}

export function decorate(doc: Document, o: DecorateOptions): Document {
  const components = (doc.components ??= {});
  components.headers = { ...components.headers, ...HEADERS };
  components.parameters = { ...components.parameters, ...PARAMETERS };
  // x-internal declares the audience (OWASP API9): a public API.
  doc.servers = [
    {
      url: o.serverUrl,
      description: o.local ? 'This server, local (set `BERTH_BASE_URL` for its public address).' : 'This server, production.',
      'x-internal': false,
    },
  ];
  const resolve = (r: string): Schema | undefined => components.schemas?.[r.split('/').pop() as string];

  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      const params = (op.parameters ??= []);
      const ok = bodySchema(op.responses?.['200'], resolve);
      const versioned = Boolean((ok?.properties as Schema | undefined)?.version);
      const page = Boolean((ok?.properties as Schema | undefined)?.next_cursor);
      // A created resource has its Location and ETag; what a 201 makes that is no resource (a
      // login link, a session) has neither.
      const created = (bodySchema(op.responses?.['201'], resolve)?.properties ?? {}) as Schema;
      // Routes declare If-Match by a `headers` schema (it is validated there); named canonically here.
      const conditional = params.some((p) => isHeaderParam(p, 'if-match'));
      op.parameters = params.filter((p) => !['if-match', 'if-none-match', 'idempotency-key'].some((n) => isHeaderParam(p, n)));
      if (conditional) op.parameters.push(ref('parameters', 'IfMatch'));
      const etagGet = method === 'get' && versioned && path.includes('{');
      if (etagGet) op.parameters.push(ref('parameters', 'IfNoneMatch'));
      if (method === 'post') op.parameters.push(ref('parameters', 'IdempotencyKey'));
      for (const p of op.parameters) describeParameter(p);
      if (op.parameters.length === 0) delete op.parameters;

      const responses = (op.responses ??= {});
      if (etagGet) responses['304'] ??= { description: 'Not modified: the `If-None-Match` ETag is still current.' };
      // Any request but a GET may carry a body, which is read (and refused) whether the operation takes one or not.
      const errors: Record<string, [string, ErrorCode]> = { ...STANDARD_ERRORS, ...(method !== 'get' ? BODY_ERRORS : {}) };
      if (conditional) errors['412'] = PRECONDITION;
      if (['post', 'delete'].includes(method) || path.includes('{')) errors['409'] = CONFLICT;
      if (Array.isArray(op.security) && op.security.length === 0) {
        delete errors['401'];
        delete errors['403'];
      }
      for (const code of op['x-errors'] ?? []) errors[String(PROBLEMS[code].status)] = [PROBLEMS[code].description, code];
      delete op['x-errors'];
      for (const [code, e] of Object.entries(errors)) responses[code] ??= problemResponse(e, o.serverUrl);

      for (const [code, response] of Object.entries(responses)) {
        const names = ['X-Request-Id', 'Access-Control-Allow-Origin'];
        if (/^[234]/.test(code)) names.push('RateLimit', 'RateLimit-Policy');
        if (code === '429' || code === '503') names.push('Retry-After');
        if (code === '200' && versioned && method !== 'post') names.push('ETag');
        if (code === '200' && page) names.push('Link');
        if (method === 'post' && ((code === '201' && created.id) || code === '202')) names.push('Location');
        if (code === '201' && created.version) names.push('ETag');
        if (method === 'post' && /^[24]/.test(code)) names.push('Idempotent-Replayed');
        response.headers = { ...Object.fromEntries(names.map((n) => [n, ref('headers', n)])), ...(response.headers as object) };
        addExamples(response.content as Record<string, Schema> | undefined, resolve, 'response');
      }
      addExamples(op.requestBody?.content, resolve, 'request');
    }
  }
  return doc;
}

function describeParameter(p: Schema): void {
  if (typeof p.$ref === 'string' || p.description) return;
  const schema = p.schema as Schema | undefined;
  const name = String(p.name);
  const description =
    (schema?.description as string | undefined) ??
    PARAMETER_DESCRIPTIONS[name] ??
    (p.in === 'path' && name.endsWith('_id') ? `The ${name.slice(0, -3).replaceAll('_', ' ')}'s id.` : undefined);
  if (description) p.description = description;
  if (schema?.description) delete schema.description;
}

function addExamples(content: Record<string, Schema> | undefined, resolve: (r: string) => Schema | undefined, d: Direction) {
  for (const media of Object.values(content ?? {})) {
    const schema = media.schema as Schema | undefined;
    if (!schema || 'example' in media || schema.format === 'binary') continue;
    const example = exampleOf(schema, resolve, d);
    if (example !== undefined) media.example = example;
  }
}
