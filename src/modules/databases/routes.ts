import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { itemRoute, listRoute, reachOf, resourceRoutes } from '../../http/crud.js';
import { ifMatchVersion, sendResource } from '../../http/etag.js';
import type { App } from '../../http/routes.js';
import { IdParams, IfMatchHeaders, PageOnlyQuery } from '../../http/schemas.js';
import {
  CreateDatabase,
  CreateDatabaseUser,
  DatabaseListQuery,
  DatabaseMutable,
  GrantParams,
  PutGrant,
  UserMutable,
  UserWriteOnly,
} from './schemas.js';
import type { DatabasesService } from './service.js';

export function databaseRoutes(app: App, svc: DatabasesService): void {
  resourceRoutes(app, {
    path: '/v1/databases',
    prefix: 'db',
    tags: ['databases'],
    resource: 'Database',
    area: 'databases',
    load: svc.loadDatabase,
    list: {
      operationId: 'listDatabases',
      summary: "List the caller's databases",
      querystring: DatabaseListQuery,
      list: svc.listDatabases,
    },
    create: {
      operationId: 'createDatabase',
      summary: 'Create a database',
      description:
        "The name must start with the account's username and `_` (422 `invalid_prefix` otherwise) and is unique on the server (409 `already_exists`). `max_databases` applies (403). The database exists on the server once `sync_state` is `in_sync`.",
      body: CreateDatabase,
      response: 'Database',
      create: svc.createDatabase,
    },
    get: {
      summary: 'Get a database',
      get: svc.getDatabase,
    },
    update: {
      noun: 'database',
      mutable: DatabaseMutable,
      description:
        'Changes the default character set and collation (`ALTER DATABASE`; existing tables keep theirs). A database cannot be renamed.',
      update: svc.updateDatabase,
    },
    remove: {
      operationId: 'deleteDatabase',
      summary: 'Delete a database and every row in it',
      description: 'Its grants go with it. Take a backup with `include: ["databases"]` first if the rows matter.',
      remove: svc.removeDatabase,
    },
  });

  grantRoutes(app, svc);
  userRoutes(app, svc);
}

function grantRoutes(app: App, svc: DatabasesService): void {
  const tags = ['databases'];
  listRoute(app, {
    path: '/v1/databases/:database_id/users',
    tags,
    operationId: 'listDatabaseGrants',
    summary: 'List the users granted a database',
    scope: 'databases:read',
    params: IdParams('db'),
    reach: reachOf(svc.loadDatabase),
    querystring: PageOnlyQuery,
    item: 'DatabaseGrant',
    list: (caller, _query, page, req) => svc.listGrants(caller, (req.params as { database_id: string }).database_id, page),
  });

  const reach = reachOf(svc.loadDatabase);
  itemRoute(app, {
    method: 'GET',
    path: '/v1/databases/:database_id/users/:user_id',
    tags,
    operationId: 'getDatabaseGrant',
    summary: "Get a user's privileges on a database",
    description: 'The privileges a database user holds on this database, with their `ETag`; 404 when it holds none.',
    scope: 'databases:read',
    reach,
    params: GrantParams,
    response: 'DatabaseGrant',
    run: (caller, p) => svc.getGrant(caller, p.database_id, p.user_id),
  });

  app.put(
    '/v1/databases/:database_id/users/:user_id',
    {
      config: { scope: 'databases:write', reach },
      schema: {
        tags,
        operationId: 'putDatabaseGrant',
        summary: "Set a user's privileges on a database",
        description:
          "Exactly these privileges, replacing any before (201 when the user had none on the database, else 200). The user and the database must belong to the same account (404 otherwise). `If-Match` takes the grant's `ETag` (a grant that does not exist matches none). Counts for new sessions as soon as `sync_state` is `in_sync`. Announced as `database_user.updated`.",
        params: GrantParams,
        headers: IfMatchHeaders,
        body: PutGrant,
        response: { 200: Type.Ref('DatabaseGrant'), 201: Type.Ref('DatabaseGrant') },
      },
    },
    async (req, reply) => {
      const p = req.params;
      const { grant, created } = await svc.putGrant(
        callerOf(req),
        p.database_id,
        p.user_id,
        req.body.privileges,
        ifMatchVersion(req),
      );
      return sendResource(req, reply, grant, created ? 201 : 200);
    },
  );

  app.delete(
    '/v1/databases/:database_id/users/:user_id',
    {
      config: { scope: 'databases:write', reach },
      schema: {
        tags,
        operationId: 'deleteDatabaseGrant',
        description:
          "Revokes every privilege of the user on this database (204). Sessions already open keep theirs until they reconnect. `If-Match` takes the grant's `ETag`. Announced as `database_user.updated`.",
        summary: "Revoke a user's privileges on a database",
        params: GrantParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Revoked' }) },
      },
    },
    async (req, reply) => {
      await svc.removeGrant(callerOf(req), req.params.database_id, req.params.user_id, ifMatchVersion(req));
      return reply.code(204).send(null);
    },
  );
}

function userRoutes(app: App, svc: DatabasesService): void {
  resourceRoutes(app, {
    path: '/v1/database-users',
    prefix: 'dbu',
    tags: ['database-users'],
    resource: 'DatabaseUser',
    area: 'databases',
    load: svc.loadUser,
    list: {
      operationId: 'listDatabaseUsers',
      summary: "List the caller's database users",
      querystring: DatabaseListQuery,
      list: svc.listUsers,
    },
    create: {
      operationId: 'createDatabaseUser',
      summary: 'Create a database user',
      description:
        "The username must start with the account's username and `_` (422 `invalid_prefix`); unique on the server (409). Either `password` or `generate_password: true` (returned once). `max_database_users` applies (403). The user has no privileges until granted a database.",
      body: CreateDatabaseUser,
      response: 'DatabaseUserWithPassword',
      create: svc.createUser,
    },
    get: {
      summary: 'Get a database user',
      get: svc.getUser,
    },
    update: {
      response: 'DatabaseUserWithPassword',
      noun: 'database user',
      mutable: UserMutable,
      writeOnly: UserWriteOnly,
      description:
        'A new `password` (or `generate_password`, returned once) replaces the old one for new logins once `sync_state` is `in_sync`.',
      update: svc.updateUser,
    },
    remove: {
      operationId: 'deleteDatabaseUser',
      summary: 'Delete a database user',
      description: 'Its grants go with it and its open sessions are ended.',
      remove: svc.removeUser,
    },
  });
}
