import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { etagOf } from './etag.js';

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  import('fastify').FastifyBaseLogger,
  TypeBoxTypeProvider
>;

const REMOVABLE = Symbol('its members may be removed');

/**
 * Marks an object whose members a merge patch may remove with `null` (`{"limit_overrides":
 * {"max_sites": null}}`: a set of overrides, each optional in the resource too). The mark is a
 * symbol, so it stays out of the document; the PATCH body built from the schema reads it.
 */
export const withRemovableMembers = <T extends TSchema>(schema: T): T => Object.assign(schema, { [REMOVABLE]: true });

/**
 * In a merge patch a nested object's members are optional, and `null` removes one (RFC 7396):
 * only a member that may be null, or of an object marked by `withRemovableMembers`, can be
 * removed, so only those take `null`. Removing any other (`{"tls": {"mode": null}}`) is a 422 at
 * validation, naming the member.
 */
function nestedPatch(schema: TSchema): TSchema {
  const s = schema as { type?: string; properties?: Record<string, TSchema>; [REMOVABLE]?: true };
  if (s.type !== 'object' || !s.properties) return schema;
  const member = (v: TSchema) => (s[REMOVABLE] ? Type.Union([v, Type.Null()]) : v);
  const props = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, Type.Optional(member(v))]));
  const { description } = schema as { description?: string };
  return Type.Object(props, { additionalProperties: false, description });
}

/**
 * Body of PATCH: every mutable field optional; a top-level null clears a nullable field;
 * nested objects merge (RFC 7396). The same fields as PUT, so both share one schema source.
 */
export const PatchBody = <T extends Record<string, TSchema>>(fields: T) =>
  Type.Object(
    Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(nestedPatch(v))])) as {
      [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>>;
    },
    { additionalProperties: false },
  );

/** 201 with Location, for creations. */
export function sendCreated<T extends { id: string; version: number }>(reply: FastifyReply, location: string, resource: T) {
  return reply.code(201).header('location', `${location}/${resource.id}`).header('etag', etagOf(resource.version)).send(resource);
}

/** 202 for async work: the resource in its new status with its operation embedded. */
export function sendAccepted<T extends { operation: { id: string } }>(reply: FastifyReply, body: T) {
  return reply.code(202).header('location', `/v1/operations/${body.operation.id}`).send(body);
}

/** The id of the resource a route addresses: its first path parameter (`/v1/webhooks/{webhook_id}/deliveries/...`). */
export const paramId = (request: FastifyRequest): string => Object.values(request.params as Record<string, string>)[0] ?? '';
