import { Type, type TSchema, type Static } from 'typebox';
import { idPattern, type IdPrefix } from '../lib/ids.js';

/** Shared schemas: one definition validates, types and documents (OpenAPI). */

export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Id = (prefix: IdPrefix, description?: string) =>
  Type.String({
    pattern: idPattern(prefix),
    minLength: prefix.length + 27,
    maxLength: prefix.length + 27,
    description,
    examples: [`${prefix}_01jd3x9v6ef8tb2q4w5n7k8m9p`],
  });

/**
 * `T | null` as a JSON Schema type array (`["string", "null"]`) rather than `anyOf`: the
 * response serializer resolves `anyOf` by validating every value, a type array it does not. An
 * `enum` lists `null` too, or a strict validator refuses the null the type allows.
 */
export const Nullable = <T extends TSchema>(schema: T) => {
  const { type, enum: values } = schema as { type?: unknown; enum?: unknown[] };
  if (typeof type !== 'string') return Type.Union([schema, Type.Null()]);
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) });
};

export const Timestamp = Type.String({ format: 'date-time', maxLength: 40 });

export const Email = Type.String({ format: 'email', maxLength: 254 });

export const Name = Type.String({ minLength: 1, maxLength: 200 });

/** Fields every resource carries. */
export const ResourceMeta = {
  created_at: Timestamp,
  updated_at: Timestamp,
  version: Type.Integer({
    minimum: 1,
    maximum: 2147483647,
    format: 'int32',
    description: 'Increases on each change; the ETag derives from it.',
  }),
};

/** An apply unit's state as every resource applied to a server shows it; `description` says what "applied" means there. */
export const SyncFields = (description: string) => ({
  sync_state: StringEnum(['pending', 'in_sync', 'error'] as const, { description }),
  sync_error: Nullable(Type.String({ maxLength: 1000 })),
});

/**
 * A path parameter is named after its resource (`{account_id}`, `{backup_id}`), never `{id}`: a
 * client generated from the document reads what it passes. `{domain}` (an id or a name) and the
 * sites' `{site_id}` follow the same rule.
 */
export const ID_PARAMS = {
  rsl: 'reseller_id',
  pln: 'plan_id',
  acc: 'account_id',
  tok: 'token_id',
  op: 'operation_id',
  evt: 'event_id',
  eml: 'email_id',
  fwd: 'forwarder_id',
  db: 'database_id',
  dbu: 'user_id',
  bak: 'backup_id',
  bks: 'schedule_id',
  whk: 'webhook_id',
  srv: 'server_id',
  mov: 'move_id',
} as const satisfies Partial<Record<IdPrefix, string>>;
export type IdParamPrefix = keyof typeof ID_PARAMS;

export const IdParams = <P extends IdParamPrefix>(prefix: P) =>
  Type.Object({ [ID_PARAMS[prefix]]: Id(prefix) } as Record<(typeof ID_PARAMS)[P], ReturnType<typeof Id>>, {
    additionalProperties: false,
  });

export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 200, format: 'int32', default: 50, description: 'Page size (1-200).' }),
  ),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Opaque cursor from `next_cursor`.' })),
};

/** The query of a list that takes no filter. */
export const PageOnlyQuery = Type.Object(PageQuery, { additionalProperties: false });

/** The body of a suspension (an account's, a site's). */
export const SuspendBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500 }) },
  { additionalProperties: false },
);

export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item, { maxItems: 200 }),
    next_cursor: Nullable(Type.String({ maxLength: 500 })),
  });

const FieldErrorSchema = Type.Object({
  pointer: Type.String({ maxLength: 1000 }),
  code: Type.String({ maxLength: 100 }),
  detail: Type.String({ maxLength: 2000 }),
});

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri', maxLength: 500 }),
    title: Type.String({ maxLength: 200 }),
    status: Type.Integer({ minimum: 400, maximum: 599, format: 'int32' }),
    detail: Type.String({ maxLength: 2000 }),
    instance: Type.String({ maxLength: 2000 }),
    code: Type.String({ maxLength: 100 }),
    request_id: Type.String({ maxLength: 200 }),
    errors: Type.Optional(Type.Array(FieldErrorSchema, { maxItems: 1000 })),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details.' },
);

/** Why asynchronous work failed (an operation, a site, a deployment): a problem's `code` and `detail`, at least. */
export const Failure = Type.Object(
  {
    code: Type.String({ maxLength: 100 }),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    detail: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true, description: 'Why the work failed: a stable `code` and a `detail` for people.' },
);
export type Failure = Static<typeof Failure>;

/**
 * The request headers of a route that honours `If-Match` (parsed by `ifMatchVersion`): declared
 * here so that the document names them; the OpenAPI conventions give them their description.
 */
export const IfMatchHeaders = Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 200 })) });

export const NoQuery = Type.Object({}, { additionalProperties: false });
