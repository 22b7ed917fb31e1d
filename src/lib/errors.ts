/**
 * Domain errors. Services throw these with a stable code; the HTTP layer alone decides the
 * status and body (see src/http/problems.ts). Nothing here knows about HTTP.
 */
export type ErrorCode =
  | 'malformed_request'
  | 'unauthenticated'
  | 'invalid_login_code'
  | 'insufficient_scope'
  | 'forbidden'
  | 'account_suspended'
  | 'feature_unavailable'
  | 'quota_exceeded'
  | 'not_found'
  | 'unknown_api_version'
  | 'method_not_allowed'
  | 'not_acceptable'
  | 'already_exists'
  | 'domain_unavailable'
  | 'in_use'
  | 'server_not_empty'
  | 'no_capacity'
  | 'invalid_state'
  | 'account_moving'
  | 'ds_still_published'
  | 'not_authoritative'
  | 'idempotency_key_in_use'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'range_not_satisfiable'
  | 'unsupported_media_type'
  | 'validation_failed'
  | 'idempotency_key_reused'
  | 'precondition_required'
  | 'headers_too_large'
  | 'request_timeout'
  | 'rate_limited'
  | 'internal_error'
  | 'unavailable';

export interface FieldError {
  /** JSON Pointer into the request body (or `/query/<name>` for query parameters). */
  pointer: string;
  code: string;
  detail: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra members of the problem body (`errors`, `limit`, `usage`, `scope`, ...). */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (`Allow`, `Retry-After`, `WWW-Authenticate`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** The message of anything thrown (a driver may reject with a non-Error). */
export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * An absolute file system path in a message: a `/` that follows no word, dot, colon or slash
 * (so a URL's path, `text/html`, `10.0.0.0/8` and `read/write` are left alone), up to a space,
 * a quote or punctuation that ends it.
 */
const ABSOLUTE_PATH = /(?<![\w.~:/-])\/[^\s'"`,;:()<>[\]]+/g;

/**
 * A failure's message as a tenant reads it (an operation's or a resource's `error`, a
 * `sync_error`): each absolute path the server's file calls and daemons name is cut to its last
 * component (`…/index.php`), so the message still says which file without showing the server's
 * layout; at most `max` characters. Only the recorded copy is cut: the error itself, where it
 * is rethrown or logged, keeps the whole message.
 */
/** A database's error (pg and PGlite give its severity): its text names tables and constraints. */
const fromDatabase = (err: unknown): boolean => typeof err === 'object' && err !== null && 'severity' in err && 'code' in err;

export const publicMessage = (err: unknown, max = 1000): string =>
  (fromDatabase(err) ? 'an internal error (the database refused a change; the logs say which)' : messageOf(err))
    .replace(ABSOLUTE_PATH, (p) => `…/${p.slice(p.replace(/\/+$/, '').lastIndexOf('/') + 1)}`)
    .slice(0, max);

export const notFound = (what = 'resource'): AppError => new AppError('not_found', `No such ${what}.`);

export const invalid = (errors: FieldError[], message = 'The request did not validate.'): AppError =>
  new AppError('validation_failed', message, { errors });

export const conflict = (
  code:
    | 'already_exists'
    | 'domain_unavailable'
    | 'in_use'
    | 'invalid_state'
    | 'account_moving'
    | 'ds_still_published'
    | 'not_authoritative',
  message: string,
  extra = {},
): AppError => new AppError(code, message, extra);

/** 409: a server still holds accounts (it cannot be deleted). */
export const serverNotEmpty = (accounts: number): AppError =>
  new AppError('server_not_empty', `The server still holds ${accounts} account(s); move them first.`, { accounts });

/** 409: no online server with the role has room for one more account. */
export const noCapacity = (role: string): AppError =>
  new AppError('no_capacity', `No online server with the role ${role} has capacity for another account.`, { role });

export const forbidden = (message: string): AppError => new AppError('forbidden', message);

export const featureUnavailable = (feature: string, message: string): AppError =>
  new AppError('feature_unavailable', message, { feature });

export interface ExceededLimit {
  limit: string;
  allowed: number;
  usage: number;
}

export const quotaExceeded = (exceeded: ExceededLimit[], message?: string): AppError =>
  new AppError(
    'quota_exceeded',
    message ?? `Exceeds ${exceeded.map((e) => e.limit).join(', ')}.`,
    // `limit` and `usage` name the first; `exceeded` lists every one (no partial changes).
    { limit: exceeded[0]?.allowed, usage: exceeded[0]?.usage, exceeded },
  );

export const insufficientScope = (scope: string, message = `This token lacks the scope ${scope}.`): AppError =>
  new AppError('insufficient_scope', message, { scope });

export const accountSuspended = (message: string): AppError => new AppError('account_suspended', message);

/** 401 with the headers that tell a client how to authenticate (and the failure bucket's state). */
export const unauthenticated = (message: string, headers: Record<string, string>): AppError =>
  new AppError('unauthenticated', message, {}, headers);

export const invalidLoginCode = (): AppError =>
  new AppError('invalid_login_code', 'The login code is unknown, used or expired. Ask for a new login link.');

/** 429: `policy` names the limit; the headers carry `Retry-After`. */
export const rateLimited = (policy: string, message: string, headers: Record<string, string>): AppError =>
  new AppError('rate_limited', message, { policy }, headers);

/** 400: the request could not be read; `errors` point at what (`/query/cursor`, a header). */
export const malformed = (message: string, errors?: FieldError[]): AppError =>
  new AppError('malformed_request', message, errors ? { errors } : {});

export const notAcceptable = (message: string): AppError => new AppError('not_acceptable', message);

export const payloadTooLarge = (message: string, limit: number): AppError =>
  new AppError('payload_too_large', message, { limit });

/** 416, with the `Content-Range` that gives the representation's length. */
export const rangeNotSatisfiable = (size: number): AppError =>
  new AppError('range_not_satisfiable', `The archive has ${size} bytes.`, {}, { 'content-range': `bytes */${size}` });

export const preconditionFailed = (message: string): AppError => new AppError('precondition_failed', message);

export const preconditionRequired = (message: string): AppError => new AppError('precondition_required', message);

export const idempotencyKeyInUse = (message: string): AppError =>
  new AppError('idempotency_key_in_use', message, {}, { 'retry-after': '1' });

export const idempotencyKeyReused = (): AppError =>
  new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');

/** 503 with `Retry-After`. */
export const unavailable = (message: string, retryAfterSeconds: number): AppError =>
  new AppError('unavailable', message, {}, { 'retry-after': String(retryAfterSeconds) });

/**
 * A 415 that says what was sent and what the operation takes, so that curl's default form type
 * or a near miss such as application/x-tar leads to the right one.
 */
export function unsupportedMediaType(contentType: string | undefined, accepted: string[]): AppError {
  const sent = contentType?.split(';')[0]?.trim();
  return new AppError(
    'unsupported_media_type',
    `${sent ? `Content-Type ${sent} is not accepted here` : 'The request has no Content-Type'}; send ${accepted.join(' or ')}.`,
    { accepted_types: accepted },
  );
}
