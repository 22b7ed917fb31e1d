import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { isLostRace } from '../db/errors.js';
import { AppError, unavailable, unsupportedMediaType, type ErrorCode, type FieldError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { CORS_HEADERS, PREFLIGHT_HEADERS } from './cors.js';
import { PROBLEMS } from './problems.js';
import { SUPPORTED_VERSIONS } from './versioning.js';

const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** Where clients reach this server: `BERTH_BASE_URL`, else the address the request came to. */
export function baseUrl(request: FastifyRequest, configured: string | null): string {
  return configured ?? `${request.protocol}://${request.host}`;
}

/** The RFC 9457 body of a stable code: one shape for every error, routed or not. */
/** What the document promises of a problem's `instance` (the request's path): its first characters. */
const INSTANCE_MAX = 2000;

export const problemBody = (base: string, code: ErrorCode, detail: string, requestId: string, instance?: string) => ({
  type: `${base}/problems/${code}`,
  title: PROBLEMS[code].title,
  status: PROBLEMS[code].status,
  detail,
  ...(instance === undefined ? {} : { instance: instance.slice(0, INSTANCE_MAX) }),
  code,
  request_id: requestId,
});

/** Writes a problem+json response (RFC 9457) for a stable code. */
function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  detail: string,
  extra: Record<string, unknown> = {},
  configuredBase: string | null = null,
): FastifyReply {
  return reply
    .code(PROBLEMS[code].status)
    .type(PROBLEM_CONTENT_TYPE)
    .send({ ...problemBody(baseUrl(request, configuredBase), code, detail, request.id, request.url), ...extra });
}

/**
 * Fastify's errors before routing (a path with bad percent-encoding, a path parameter past
 * `maxParamLength`): a problem like every other error, with the request id.
 */
export const frameworkErrors =
  (configuredBase: string | null) =>
  (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    // Before routing, so none of the onRequest hooks ran: their headers are set here.
    void reply.headers({ ...CORS_HEADERS, 'x-request-id': request.id });
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
      void sendProblem(request, reply, 'not_found', 'No such resource.', {}, configuredBase);
    else
      void sendProblem(
        request,
        reply,
        'malformed_request',
        'The request path is not valid percent-encoded UTF-8.',
        {},
        configuredBase,
      );
  };

/**
 * Errors Node's HTTP parser raises before there is a request (a header too large, a bad
 * Content-Length, Content-Length with Transfer-Encoding, a bad chunk, a NUL or bare CR in a
 * header): written straight to the socket as problem+json with a new request id, then closed.
 */
export const clientErrorHandler =
  (configuredBase: string | null) =>
  (err: NodeJS.ErrnoException, socket: Duplex): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const code: keyof typeof CLIENT_ERROR_DETAILS =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 'headers_too_large'
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'request_timeout'
          : 'malformed_request';
    const status = PROBLEMS[code].status;
    const requestId = newId('req');
    const body = JSON.stringify(problemBody(configuredBase ?? '', code, CLIENT_ERROR_DETAILS[code], requestId));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };

const CLIENT_ERROR_DETAILS: Record<'headers_too_large' | 'request_timeout' | 'malformed_request', string> = {
  headers_too_large: 'The request headers are larger than the server accepts.',
  request_timeout: 'The request was not received in time.',
  malformed_request: 'The request is not valid HTTP/1.1 (its headers, Content-Length or chunked body).',
};

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const KEYWORD_CODES: Record<string, string> = {
  required: 'required',
  additionalProperties: 'unknown_field',
  type: 'invalid_type',
  format: 'invalid_format',
  pattern: 'invalid_format',
  minLength: 'too_short',
  maxLength: 'too_long',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  minItems: 'too_few',
  maxItems: 'too_many',
  uniqueItems: 'duplicate',
  enum: 'invalid_value',
  const: 'invalid_value',
};

/** Every ajv failure as a field error with a JSON Pointer; `prefix` places query errors. */
function toFieldErrors(errors: AjvError[], prefix = ''): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of errors) {
    // anyOf branches (nullable fields) repeat the same failure; the summary line says enough.
    if (e.keyword === 'anyOf') continue;
    let pointer = e.instancePath;
    let detail = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      pointer += `/${String(e.params.missingProperty)}`;
      detail = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      pointer += `/${String(e.params.additionalProperty)}`;
      detail = 'is not a known field';
    } else if (e.keyword === 'enum') {
      detail = `must be one of: ${(e.params.allowedValues as unknown[]).join(', ')}`;
    }
    const code = KEYWORD_CODES[e.keyword] ?? 'invalid';
    const key = `${prefix}${pointer}|${code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ pointer: prefix + pointer, code, detail });
  }
  return out;
}

/** What a body that is missing or not an object should have been: "a JSON object with reason". */
function expectedBody(request: FastifyRequest): string {
  const required = (request.routeOptions.schema?.body as { required?: string[] } | undefined)?.required ?? [];
  return `must be a JSON object${required.length ? ` with ${required.join(', ')}` : ''}`;
}

function fromFastifyError(
  error: FastifyError,
  request: FastifyRequest,
): { code: ErrorCode; detail: string; extra?: Record<string, unknown> } {
  if (error.validation) {
    const context = error.validationContext;
    if (context === 'params') return { code: 'not_found', detail: 'No such resource.' };
    const ajvErrors = error.validation as unknown as AjvError[];
    if (context === 'body') {
      const errors = toFieldErrors(ajvErrors).map((e) =>
        e.pointer === '' && e.code === 'invalid_type' ? { ...e, detail: expectedBody(request) } : e,
      );
      return { code: 'validation_failed', detail: 'The request body did not validate.', extra: { errors } };
    }
    const where = context === 'querystring' ? '/query' : '/headers';
    return {
      code: 'malformed_request',
      detail: `Invalid ${context === 'querystring' ? 'query parameters' : 'headers'}.`,
      extra: { errors: toFieldErrors(ajvErrors, where) },
    };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'malformed_request', detail: 'The body is empty but Content-Type says JSON.' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'malformed_request', detail: 'The body is not valid JSON.' };
  }
  if (error.statusCode === 413) return { code: 'payload_too_large', detail: 'The request body is too large.' };
  // Any other client error Fastify raises (bad Content-Length, ...): a 400, never a 500.
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return { code: 'malformed_request', detail: 'The request could not be read.' };
  return { code: 'internal_error', detail: 'The server failed to handle the request.' };
}

/** A body Fastify found no parser for: the operation's declared media types, else JSON. */
function unparsedBody(request: FastifyRequest): AppError {
  const schema = request.routeOptions.schema as { consumes?: string[]; body?: { content?: Record<string, unknown> } } | undefined;
  const declared = schema?.consumes ?? Object.keys(schema?.body?.content ?? {});
  const json = request.method === 'PATCH' ? ['application/merge-patch+json', 'application/json'] : ['application/json'];
  return unsupportedMediaType(request.headers['content-type'], declared.length > 0 ? declared : json);
}

/**
 * Fastify's own 415 (no parser for the body) gets the operation's media types. A transaction
 * that lost a race in the database (a deadlock, a serialization failure) was rolled back: the
 * client may send the request again, as after any 503. It is not run again here: the handler
 * may have committed earlier steps, and its callbacks were not written to run twice.
 */
function asProblem(thrown: FastifyError, request: FastifyRequest): FastifyError | AppError {
  if (thrown instanceof AppError) return thrown;
  if (thrown.statusCode === 415) return unparsedBody(request);
  if (isLostRace(thrown)) {
    request.log.warn({ err: thrown }, 'a transaction lost a race and was rolled back');
    return unavailable('The request conflicted with a concurrent one and was rolled back. Send it again.', 1);
  }
  return thrown;
}

const ALL_METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Every error — ours and Fastify's own (bad JSON, 404 route, 405, 413, 415) — leaves as
 * problem+json with a stable code and the request id; never a stack trace or SQL.
 */
export function installErrorHandling(app: FastifyInstance, configuredBase: string | null): void {
  // A mirror of the routes, to tell "no such path" (404) from "wrong method" (405 + Allow).
  const mirror = FindMyWay();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) if (!mirror.find(m as HTTPMethod, route.url)) mirror.on(m as HTTPMethod, route.url, () => undefined);
  });

  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    const error = asProblem(thrown, request);
    if (error instanceof AppError) {
      void reply.headers(error.headers);
      return sendProblem(request, reply, error.code, error.message, error.extra, configuredBase);
    }
    const mapped = fromFastifyError(error, request);
    if (mapped.code === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, mapped.code, mapped.detail, mapped.extra, configuredBase);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const version = /^\/(v\d+)(\/|$)/.exec(path)?.[1];
    if (version && !SUPPORTED_VERSIONS.includes(version)) {
      return sendProblem(
        request,
        reply,
        'unknown_api_version',
        `API version ${version} does not exist.`,
        {
          supported_versions: SUPPORTED_VERSIONS,
        },
        configuredBase,
      );
    }
    const allow = ALL_METHODS.filter((m) => mirror.find(m, path));
    if (request.method === 'OPTIONS' && allow.length > 0) {
      // A CORS preflight for a path that exists.
      return reply
        .code(204)
        .headers({ ...PREFLIGHT_HEADERS, allow: allow.join(', '), 'access-control-allow-methods': allow.join(', ') })
        .send();
    }
    if (allow.length > 0) {
      void reply.header('allow', allow.join(', '));
      return sendProblem(request, reply, 'method_not_allowed', `${request.method} is not allowed here.`, {}, configuredBase);
    }
    return sendProblem(request, reply, 'not_found', `No route ${path}.`, {}, configuredBase);
  });
}
