import type { FastifyRequest } from 'fastify';
import { Type, type Static, type TObject, type TSchema } from 'typebox';
import type { Caller } from '../auth/caller.js';
import type { Scope, ScopeArea } from '../auth/scopes.js';
import { type PageParams } from '../db/paging.js';
import { pageParams, sendPage } from '../http/pagination.js';
import type { ErrorCode } from '../lib/errors.js';
import { replacement } from '../lib/merge-patch.js';
import { callerOf } from './auth.js';
import { ifMatchVersion, sendResource } from './etag.js';
import { PatchBody, paramId, sendAccepted, sendCreated, type App } from './routes.js';
import { ID_PARAMS, IdParams, IfMatchHeaders, Page, type IdParamPrefix } from './schemas.js';

/**
 * The routes every resource shares, declared once: create, list, get, replace + merge-patch, delete.
 * A module passes its schemas and service functions; conventions (reach, scopes, ETags,
 * pagination, problems) come from the shared plugins the same way for all.
 */

/** The `config.reach` of an item route: loads the addressed resource, 404 when out of reach. */
export const reachOf =
  (load: (caller: Caller, id: string) => Promise<unknown>) =>
  async (request: FastifyRequest): Promise<unknown> =>
    load(callerOf(request), paramId(request));

export interface CreateRouteOptions<B extends TSchema, R extends { id: string }> {
  /** The collection (`/v1/domains/:domain/records`). */
  path: string;
  tags: string[];
  operationId: string;
  summary: string;
  /** What the creation does and what it refuses (the document shows it to every client). */
  description: string;
  scope: Scope;
  /** For a collection under a resource: its params and reach. */
  params?: TObject;
  reach?: (request: FastifyRequest) => Promise<unknown>;
  querystring?: TObject;
  body: B;
  /** `$id` of the answer: 201 with `Location` and `ETag`, or, with `accepted`, 202 with its operation. */
  response: string;
  accepted?: boolean;
  /** The answer of `?dry_run=true` (200, nothing created), for a creation that can be previewed. */
  dryRun?: TSchema;
  /** Where the new resource lives when it is not `path` (a nested collection addressed by name). */
  location?: (created: R) => string;
  /** The created resource, or with `dryRun` what it would be: `{dry_run: true, ...}`. */
  create: (caller: Caller, body: Static<B>, request: FastifyRequest) => Promise<R | { dry_run: true }>;
}

/** POST of a collection: 201 with Location and ETag (or 202 with the operation that does the work). */
export function createRoute<B extends TSchema, R extends { id: string }>(app: App, o: CreateRouteOptions<B, R>): void {
  const status = o.accepted ? 202 : 201;
  app.post(
    o.path,
    {
      config: { scope: o.scope, ...(o.reach ? { reach: o.reach } : {}) },
      schema: {
        ...(o.params ? { params: o.params } : {}),
        ...(o.querystring ? { querystring: o.querystring } : {}),
        tags: o.tags,
        operationId: o.operationId,
        summary: o.summary,
        description: o.description,
        body: o.body,
        response: { ...(o.dryRun ? { 200: o.dryRun } : {}), [status]: Type.Ref(o.response) },
      },
    },
    async (req, reply) => {
      const created = await o.create(callerOf(req), req.body as Static<B>, req);
      if ('dry_run' in created) return reply.code(200).send(created);
      if (o.accepted) return sendAccepted(reply, created as R & { operation: { id: string } });
      return sendCreated(reply, o.location?.(created) ?? o.path, created as R & { version: number });
    },
  );
}

export interface ListRouteOptions<Q extends TObject> {
  path: string;
  tags: string[];
  operationId: string;
  summary: string;
  description?: string;
  scope?: Scope;
  /** For a collection under a resource (`/v1/domains/:domain/changes`): its params and reach. */
  params?: TObject;
  reach?: (request: FastifyRequest) => Promise<unknown>;
  /** Filters besides `limit` and `cursor` (which every list takes). */
  querystring: Q;
  /** `$id` of the item schema. */
  item: string;
  /** Problems it answers beyond the conventions (a filter that names nothing: `validation_failed`). */
  errors?: ErrorCode[];
  list: (caller: Caller, query: Static<Q>, page: PageParams, request: FastifyRequest) => Promise<{ id: string }[]>;
}

export function listRoute<Q extends TObject>(app: App, o: ListRouteOptions<Q>): void {
  app.get(
    o.path,
    {
      config: { ...(o.scope ? { scope: o.scope } : {}), ...(o.reach ? { reach: o.reach } : {}) },
      schema: {
        ...(o.params ? { params: o.params } : {}),
        tags: o.tags,
        operationId: o.operationId,
        summary: o.summary,
        description:
          o.description ??
          'A page of what the token can reach; filters combine. `next_cursor` (also in the `Link` header) leads to the next page; `null` on the last.',
        querystring: o.querystring,
        response: { 200: Page(Type.Ref(o.item)) },
        ...(o.errors ? { 'x-errors': o.errors } : {}),
      },
    },
    async (req, reply) => {
      const query = req.query as Static<Q> & { limit?: number; cursor?: string };
      const page = pageParams(query);
      return sendPage(req, reply, await o.list(callerOf(req), query, page, req), page);
    },
  );
}

const GET_DESCRIPTION =
  "The resource as lists show it, with its `ETag` (`If-None-Match` answers 304). 404 for an id that does not exist or is outside the token's reach (the two are indistinguishable).";

export interface GetRouteOptions {
  path: string;
  description?: string;
  prefix: IdParamPrefix;
  tags: string[];
  /** `$id` of the resource schema; also names the operation (getX). */
  resource: string;
  summary: string;
  scope: Scope;
  reach: (request: FastifyRequest) => Promise<unknown>;
  get: (caller: Caller, id: string) => Promise<{ version: number }>;
}

/** GET of one resource, with its ETag (304 on If-None-Match). */
function getRoute(app: App, o: GetRouteOptions): void {
  app.get(
    `${o.path}/:${ID_PARAMS[o.prefix]}`,
    {
      config: { scope: o.scope, reach: o.reach },
      schema: {
        tags: o.tags,
        operationId: `get${o.resource}`,
        summary: o.summary,
        description: o.description ?? GET_DESCRIPTION,
        params: IdParams(o.prefix),
        response: { 200: Type.Ref(o.resource) },
      },
    },
    async (req, reply) => sendResource(req, reply, await o.get(callerOf(req), paramId(req))),
  );
}

export interface UpdateRoutesOptions {
  path: string;
  prefix: IdParamPrefix;
  tags: string[];
  /** `$id` of the resource schema; also names the operations (replaceX, updateX). */
  resource: string;
  noun: string;
  scope: Scope;
  reach: (request: FastifyRequest) => Promise<unknown>;
  /** The mutable fields: all required for PUT, all optional for PATCH. */
  mutable: Record<string, TSchema>;
  /** Write-only fields, optional in PUT and PATCH alike (a new password). */
  writeOnly?: Record<string, TSchema>;
  /** `$id` of the response schema when it differs from the resource's (one-time secrets). */
  response?: string;
  description?: string;
  update: (caller: Caller, id: string, patch: Record<string, unknown>, expectedVersion?: number) => Promise<{ version: number }>;
}

const REPLACE_DESCRIPTION = 'Every mutable field is required, and each replaces the current value whole (an object too).';
export const PATCH_DESCRIPTION = 'A JSON Merge Patch (RFC 7396): only the fields sent change, `null` clears a nullable field.';
/** A route's own words first, then the convention it follows. */
export const described = (own: string | undefined, convention: string) => (own ? `${own}\n\n${convention}` : convention);

/** PUT (every mutable field) and PATCH (JSON Merge Patch) share one service call. */
function updateRoutes(app: App, o: UpdateRoutesOptions): void {
  const common = {
    tags: o.tags,
    params: IdParams(o.prefix),
    headers: IfMatchHeaders,
    response: { 200: Type.Ref(o.response ?? o.resource) },
  };
  const writeOnly = Object.fromEntries(Object.entries(o.writeOnly ?? {}).map(([k, v]) => [k, Type.Optional(v)]));
  const handler =
    (asPatch: (body: Record<string, unknown>) => Record<string, unknown>) =>
    async (req: FastifyRequest, reply: Parameters<typeof sendResource>[1]) =>
      sendResource(
        req,
        reply,
        await o.update(callerOf(req), paramId(req), asPatch(req.body as Record<string, unknown>), ifMatchVersion(req)),
      );
  const config = { scope: o.scope, reach: o.reach };
  app.put(
    `${o.path}/:${ID_PARAMS[o.prefix]}`,
    {
      config,
      schema: {
        ...common,
        operationId: `replace${o.resource}`,
        summary: `Replace a ${o.noun}`,
        description: described(o.description, REPLACE_DESCRIPTION),
        body: Type.Object({ ...o.mutable, ...writeOnly }, { additionalProperties: false }),
      },
    },
    handler(replacement),
  );
  app.patch(
    `${o.path}/:${ID_PARAMS[o.prefix]}`,
    {
      config,
      schema: {
        ...common,
        operationId: `update${o.resource}`,
        summary: `Update a ${o.noun} (JSON Merge Patch)`,
        description: described(o.description, PATCH_DESCRIPTION),
        body: Type.Object({ ...PatchBody(o.mutable).properties, ...writeOnly }, { additionalProperties: false }),
      },
    },
    handler((body) => body),
  );
}

export interface DeleteRouteOptions {
  path: string;
  prefix: IdParamPrefix;
  tags: string[];
  operationId: string;
  summary: string;
  /** What goes with it, and what refuses the deletion. */
  description: string;
  scope: Scope;
  reach: (request: FastifyRequest) => Promise<unknown>;
  remove: (caller: Caller, id: string, expectedVersion?: number) => Promise<void>;
}

const DELETE_DESCRIPTION = '204 once deleted.';

/** DELETE of a resource addressed by its id alone. */
function deleteRoute(app: App, o: DeleteRouteOptions): void {
  itemDeleteRoute(app, {
    ...o,
    path: `${o.path}/:${ID_PARAMS[o.prefix]}`,
    params: IdParams(o.prefix),
    remove: (caller, _params, expectedVersion, req) => o.remove(caller, paramId(req), expectedVersion),
  });
}

export interface ItemDeleteRouteOptions<P extends TObject> extends Omit<DeleteRouteOptions, 'prefix' | 'remove'> {
  /** The item's path parameters (a nested item: its parent's and its own). */
  params: P;
  remove: (caller: Caller, params: Static<P>, expectedVersion: number | undefined, request: FastifyRequest) => Promise<void>;
}

/** DELETE answering 204; If-Match honoured. */
export function itemDeleteRoute<P extends TObject>(app: App, o: ItemDeleteRouteOptions<P>): void {
  app.delete(
    o.path,
    {
      config: { scope: o.scope, reach: o.reach },
      schema: {
        tags: o.tags,
        operationId: o.operationId,
        summary: o.summary,
        description: described(o.description, DELETE_DESCRIPTION),
        params: o.params,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    async (req, reply) => {
      await o.remove(callerOf(req), req.params as Static<P>, ifMatchVersion(req), req);
      return reply.code(204).send(null);
    },
  );
}

/** What the routes of one resource share: where it lives, who may read and write it, how it is loaded. */
type Shared = 'path' | 'tags' | 'scope' | 'reach' | 'prefix' | 'resource';

export interface ResourceRoutesOptions<Q extends TObject, B extends TSchema, R extends { id: string }> {
  path: string;
  prefix: IdParamPrefix;
  tags: string[];
  /** `$id` of the resource schema: the list's item, and the name of getX, replaceX and updateX. */
  resource: string;
  /** The scope area: `<area>:read` for the reads, `<area>:write` for the writes. */
  area: ScopeArea;
  /** Loads the addressed resource in the caller's reach (404 otherwise): every item route's reach. */
  load: (caller: Caller, id: string) => Promise<unknown>;
  list: Omit<ListRouteOptions<Q>, 'path' | 'tags' | 'scope' | 'item'>;
  create?: Omit<CreateRouteOptions<B, R>, 'path' | 'tags' | 'scope'>;
  get: Omit<GetRouteOptions, Shared>;
  update?: Omit<UpdateRoutesOptions, Shared>;
  remove?: Omit<DeleteRouteOptions, Shared>;
}

/** A resource's collection and item routes, declared in one place: list, create, get, PUT and PATCH, delete. */
export function resourceRoutes<Q extends TObject, B extends TSchema, R extends { id: string }>(
  app: App,
  o: ResourceRoutesOptions<Q, B, R>,
): void {
  const { path, tags, prefix, resource } = o;
  const read: Scope = `${o.area}:read`;
  const write: Scope = `${o.area}:write`;
  const reach = reachOf(o.load);
  listRoute(app, { path, tags, scope: read, item: resource, ...o.list });
  if (o.create) createRoute(app, { path, tags, scope: write, ...o.create });
  getRoute(app, { path, tags, prefix, resource, scope: read, reach, ...o.get });
  if (o.update) updateRoutes(app, { path, tags, prefix, resource, scope: write, reach, ...o.update });
  if (o.remove) deleteRoute(app, { path, tags, prefix, scope: write, reach, ...o.remove });
}

export interface ItemRouteOptions<P extends TObject, B extends TSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  tags: string[];
  operationId: string;
  summary: string;
  description: string;
  /** Omitted: any authenticated caller (what it reaches still decides). */
  scope?: Scope;
  reach?: (request: FastifyRequest) => Promise<unknown>;
  params: P;
  body?: B;
  headers?: TObject;
  /** `$id` of the answer: 200 with its ETag, or, with `accepted`, 202 with the operation doing the work. */
  response: string;
  accepted?: boolean;
  run: (
    caller: Caller,
    params: Static<P>,
    body: Static<B>,
    request: FastifyRequest,
  ) => Promise<{ version: number } | { operation: { id: string } }>;
}

/** A read or an action on one addressed resource (a nested item, a suspension, a cancel), answered with the resource. */
export function itemRoute<P extends TObject, B extends TSchema>(app: App, o: ItemRouteOptions<P, B>): void {
  const status = o.accepted ? 202 : 200;
  app.route({
    method: o.method,
    url: o.path,
    config: { ...(o.scope ? { scope: o.scope } : {}), ...(o.reach ? { reach: o.reach } : {}) },
    schema: {
      tags: o.tags,
      operationId: o.operationId,
      summary: o.summary,
      description: o.description,
      params: o.params,
      ...(o.body ? { body: o.body } : {}),
      ...(o.headers ? { headers: o.headers } : {}),
      response: { [status]: Type.Ref(o.response) },
    },
    handler: async (req, reply) => {
      const result = await o.run(callerOf(req), req.params as Static<P>, req.body as Static<B>, req);
      if (o.accepted) return sendAccepted(reply, result as { operation: { id: string } });
      return sendResource(req, reply, result as { version: number });
    },
  });
}
