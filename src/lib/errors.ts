/**
 * Domain errors. Services throw these with a stable code; the HTTP layer alone decides the
 * status and body (see src/http/problems.ts). Nothing here knows about HTTP.
 */
export type ErrorCode =
  | 'malformed_request'
  | 'unauthenticated'
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
  | 'invalid_state'
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

export const notFound = (what = 'resource'): AppError => new AppError('not_found', `No such ${what}.`);

export const invalid = (errors: FieldError[], message = 'The request did not validate.'): AppError =>
  new AppError('validation_failed', message, { errors });

export const conflict = (
  code: 'already_exists' | 'domain_unavailable' | 'in_use' | 'invalid_state',
  message: string,
  extra = {},
): AppError => new AppError(code, message, extra);

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
