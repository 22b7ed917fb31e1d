import type { ErrorCode } from '../lib/errors.js';

export interface ProblemDoc {
  status: number;
  title: string;
  description: string;
}

/** The one place where each stable error code gets its status, title and documentation. */
export const PROBLEMS: Record<ErrorCode, ProblemDoc> = {
  malformed_request: {
    status: 400,
    title: 'Malformed request',
    description: 'The request could not be read: invalid JSON, a bad or unknown query parameter, or a bad header.',
  },
  unauthenticated: {
    status: 401,
    title: 'Unauthenticated',
    description:
      'The bearer token is missing, malformed, unknown, expired, revoked, or not allowed from this address. Send `Authorization: Bearer berth_...`.',
  },
  invalid_login_code: {
    status: 401,
    title: 'Invalid login code',
    description:
      'The code of a login link is unknown, already exchanged or older than its 60 seconds (`POST /v1/sessions`). Each link is exchanged once: make a new one.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    description: 'The token can see the resource but lacks the scope named in `scope` for this operation.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    description: 'The principal behind the token may not perform this operation (for example an account creating plans).',
  },
  account_suspended: {
    status: 403,
    title: 'Account suspended',
    description: 'The hosting account (or its reseller) is suspended: its resources are read-only for its own principal.',
  },
  feature_unavailable: {
    status: 403,
    title: 'Feature unavailable',
    description:
      "The account's plan does not include the feature the request asks for (`feature` names it: `ssl` for HTTPS certificates, `php`, `backups`).",
  },
  quota_exceeded: {
    status: 403,
    title: 'Quota exceeded',
    description: 'The change would exceed a plan limit. `limit` and `usage` describe the first; `exceeded` lists all.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    description:
      'The resource does not exist or is outside the reach of the token. The two cases are indistinguishable by design.',
  },
  unknown_api_version: {
    status: 404,
    title: 'Unknown API version',
    description:
      'The first path segment names an API version this server does not serve. `supported_versions` lists those it does.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    description: 'The path exists but not with this method. The `Allow` header lists the methods it accepts.',
  },
  not_acceptable: {
    status: 406,
    title: 'Not acceptable',
    description: 'The `Accept` header asks for a representation the endpoint cannot produce.',
  },
  already_exists: {
    status: 409,
    title: 'Already exists',
    description: 'A resource with the same unique value (a username, a name) already exists.',
  },
  domain_unavailable: {
    status: 409,
    title: 'Domain unavailable',
    description:
      "The name lies inside or above a domain hosted for another account: one tenant cannot hold a zone within another tenant's domain. Sub-domains of a domain in the same account are allowed.",
  },
  in_use: {
    status: 409,
    title: 'In use',
    description: 'The resource is still used by others (listed in `used_by`) and cannot be removed.',
  },
  server_not_empty: {
    status: 409,
    title: 'Server not empty',
    description: 'The server still holds accounts (counted in `accounts`); move them to other servers before deleting it.',
  },
  no_capacity: {
    status: 409,
    title: 'No capacity',
    description:
      'No online server with the role named in `role` has placement enabled and room for another account; add a server or raise a capacity.',
  },
  account_moving: {
    status: 409,
    title: 'Account moving',
    description:
      'The account is being moved to another server (`move_id` names the move): deployments, backups, restores, its termination and another move wait until the move has ended.',
  },
  ds_still_published: {
    status: 409,
    title: 'DS still published',
    description:
      'The parent zone still publishes a DS record for the zone: unsigning it now would make validating resolvers refuse every answer. Remove the DS at the registrar first, or pass `force: true` to publish the CDS/CDNSKEY delete records (RFC 8078) and unsign once the DS is gone.',
  },
  not_authoritative: {
    status: 409,
    title: 'Not authoritative',
    description:
      "The zone's NS records do not name this provider's name servers: Berth does not answer for it, so it cannot sign it.",
  },
  invalid_state: {
    status: 409,
    title: 'Invalid state',
    description: 'The resource is in a state that does not allow this operation (for example canceling a finished operation).',
  },
  idempotency_key_in_use: {
    status: 409,
    title: 'Idempotency key in use',
    description: 'A request with this `Idempotency-Key` is still being processed. Retry after it completes.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    description: 'The request was not received completely in time; the connection is closed.',
  },
  precondition_failed: {
    status: 412,
    title: 'Precondition failed',
    description: 'The `If-Match` header does not match the current `ETag`: the resource changed since it was read.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    description: 'The request body exceeds the limit of this endpoint (1 MiB for JSON).',
  },
  range_not_satisfiable: {
    status: 416,
    title: 'Range not satisfiable',
    description: 'The `Range` lies outside the representation; `Content-Range` gives its length.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description: 'The `Content-Type` of the body is not one this endpoint accepts (JSON endpoints take `application/json`).',
  },
  validation_failed: {
    status: 422,
    title: 'Validation failed',
    description: 'The body is well-formed but invalid. `errors` lists every failure with a JSON Pointer into the body.',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused',
    description: 'This `Idempotency-Key` was already used with a different method, path or body.',
  },
  precondition_required: {
    status: 428,
    title: 'Precondition required',
    description: 'This operation replaces state and requires an `If-Match` header with the current `ETag`.',
  },
  headers_too_large: {
    status: 431,
    title: 'Request header fields too large',
    description: 'The request headers exceed the size the server reads (16 KiB); the connection is closed.',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limited',
    description: 'Too many requests for the policy named in `policy`. Wait for `Retry-After` seconds. No lockout follows.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    description: 'The server failed. The `request_id` identifies the failure in its logs.',
  },
  unavailable: {
    status: 503,
    title: 'Unavailable',
    description:
      'The service is starting, stopping or cannot reach its database, or it rolled the request back in a conflict with a concurrent one (a deadlock). Retry after `Retry-After` seconds.',
  },
};

export const PROBLEM_CODES = Object.keys(PROBLEMS) as ErrorCode[];
