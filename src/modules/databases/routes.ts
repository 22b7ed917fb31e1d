import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { deleteRoute, getRoute, listRoute, reachOf, updateRoutes } from '../../http/crud.js';
import { sendCreated, type App } from '../../http/routes.js';
import { Id, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';
import { CHARSETS, COLLATIONS, PRIVILEGES } from './rules.js';
import type { DatabasesService } from './service.js';

const SyncFields = {
  sync_state: StringEnum(['pending', 'in_sync', 'error'] as const, {
    description:
      "Whether the database server has the account's current databases, users and grants (applied together); `error` with `sync_error` while applies fail (they are retried).",
  }),
  sync_error: Nullable(Type.String({ maxLength: 1000 })),
};
const Charset = StringEnum(CHARSETS as [string, ...string[]], { description: 'Default `utf8mb4`.' });
const Collation = Type.String({
  minLength: 1,
  maxLength: 64,
  description: `One of the charset's: ${Object.entries(COLLATIONS)
    .map(([c, list]) => `${c}: ${list.join(', ')}`)
    .join('; ')}. Default: the first of its charset's.`,
});
const Name = (what: string, max: number) =>
  Type.String({
    minLength: 1,
    maxLength: 100,
    description: `\`<account username>_<suffix>\`: the suffix 1-${max} characters of a-z, 0-9 and \`_\`; at most ${what === 'database' ? 64 : 80} characters in all. Unique on the server; immutable.`,
  });
const Password = Type.String({
  minLength: 1,
  maxLength: 1024,
  writeOnly: true,
  description:
    'At least 12 characters, no control characters, not containing the user name. Write-only: kept only as the hash MariaDB verifies.',
});
const GeneratePassword = Type.Boolean({ description: 'Generate a 24-character password, returned once in this response.' });
const UserStatus = StringEnum(['active', 'suspended'] as const, {
  description: '`suspended`: the user cannot log in (nor can any user of a suspended account); its open sessions are ended.',
});
const Privileges = Type.Array(StringEnum(['ALL', ...PRIVILEGES] as [string, ...string[]]), {
  minItems: 1,
  maxItems: PRIVILEGES.length,
  uniqueItems: true,
  description: '`["ALL"]`, or database-level privileges (`CREATE_TEMPORARY_TABLES` is `CREATE TEMPORARY TABLES`).',
});

const Database = Type.Object(
  {
    id: Id('db'),
    account_id: Id('acc'),
    name: Type.String({ maxLength: 64 }),
    engine: StringEnum(['mariadb'] as const),
    charset: Charset,
    collation: Type.String({ maxLength: 64 }),
    size_bytes: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      format: 'int64',
      description:
        "Data and indexes, measured on the server at each apply and every minute; counts against the account's `disk_quota_mb`.",
    }),
    status: StringEnum(['active', 'suspended'] as const, {
      description: '`suspended` while the account is: its users cannot log in.',
    }),
    ...SyncFields,
    ...ResourceMeta,
  },
  { $id: 'Database', description: 'A MariaDB database of an account.' },
);
const grantOfUser = Type.Object({ database_id: Id('db'), database: Type.String({ maxLength: 64 }), privileges: Privileges });
const userFields = {
  id: Id('dbu'),
  account_id: Id('acc'),
  username: Type.String({ maxLength: 80 }),
  status: UserStatus,
  grants: Type.Array(grantOfUser, {
    maxItems: 10_000,
    description: 'The databases the user may use, with its privileges on each.',
  }),
  ...SyncFields,
  ...ResourceMeta,
};
const DatabaseUser = Type.Object(userFields, {
  $id: 'DatabaseUser',
  description: 'A MariaDB user of an account; it sees only the databases it is granted.',
});
const DatabaseUserWithPassword = Type.Object(
  {
    ...userFields,
    password: Type.Optional(Type.String({ maxLength: 100, description: 'A generated password; in this response only.' })),
  },
  { $id: 'DatabaseUserWithPassword', description: 'A database user, with its generated password when one was asked for.' },
);
const DatabaseGrant = Type.Object(
  {
    id: Id('dbu'),
    username: Type.String({ maxLength: 80 }),
    database_id: Id('db'),
    database: Type.String({ maxLength: 64 }),
    privileges: Privileges,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'DatabaseGrant', description: "A user's privileges on one database; `id` is the user's." },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    account_id: Type.Optional(Id('acc')),
    q: Type.Optional(Type.String({ maxLength: 80, description: 'Substring of the name.' })),
  },
  { additionalProperties: false },
);
const GrantParams = Type.Object({ database_id: Id('db'), user_id: Id('dbu') }, { additionalProperties: false });

export function databaseRoutes(app: App, svc: DatabasesService): void {
  const tags = ['databases'];
  const reach = reachOf(svc.loadDatabase);

  listRoute(app, {
    path: '/v1/databases',
    tags,
    operationId: 'listDatabases',
    summary: "List the caller's databases",
    scope: 'databases:read',
    querystring: ListQuery,
    item: 'Database',
    list: svc.listDatabases,
  });

  app.post(
    '/v1/databases',
    {
      config: { scope: 'databases:write' },
      schema: {
        tags,
        operationId: 'createDatabase',
        summary: 'Create a database',
        description:
          "The name must start with the account's username and `_` (422 `invalid_prefix` otherwise) and is unique on the server (409 `already_exists`). `max_databases` applies (403). The database exists on the server once `sync_state` is `in_sync`.",
        body: Type.Object(
          {
            account_id: Id('acc'),
            name: Name('database', 32),
            charset: Type.Optional(Charset),
            collation: Type.Optional(Collation),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Database') },
      },
    },
    async (req, reply) => sendCreated(reply, '/v1/databases', await svc.createDatabase(callerOf(req), req.body)),
  );

  getRoute(app, {
    path: '/v1/databases',
    prefix: 'db',
    tags,
    resource: 'Database',
    summary: 'Get a database',
    scope: 'databases:read',
    reach,
    get: svc.getDatabase,
  });

  updateRoutes(app, {
    path: '/v1/databases',
    prefix: 'db',
    tags,
    resource: 'Database',
    noun: 'database',
    scope: 'databases:write',
    reach,
    mutable: { charset: Charset, collation: Collation },
    description:
      'Changes the default character set and collation (`ALTER DATABASE`; existing tables keep theirs). A database cannot be renamed.',
    update: svc.updateDatabase,
  });

  deleteRoute(app, {
    path: '/v1/databases',
    prefix: 'db',
    tags,
    operationId: 'deleteDatabase',
    summary: 'Delete a database and every row in it',
    description: 'Its grants go with it. Take a backup with `include: ["databases"]` first if the rows matter.',
    scope: 'databases:write',
    reach,
    remove: svc.removeDatabase,
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
    params: Type.Object({ database_id: Id('db') }, { additionalProperties: false }),
    reach: reachOf(svc.loadDatabase),
    querystring: Type.Object(PageQuery, { additionalProperties: false }),
    item: 'DatabaseGrant',
    list: (caller, _query, page, req) => svc.listGrants(caller, (req.params as { database_id: string }).database_id, page),
  });

  const params = (req: { params: unknown }) => req.params as { database_id: string; user_id: string };
  const reach = reachOf(svc.loadDatabase);
  app.get(
    '/v1/databases/:database_id/users/:user_id',
    {
      config: { scope: 'databases:read', reach },
      schema: {
        tags,
        operationId: 'getDatabaseGrant',
        description: 'The privileges a database user holds on this database; 404 when it holds none.',
        summary: "Get a user's privileges on a database",
        params: GrantParams,
        response: { 200: Type.Ref('DatabaseGrant') },
      },
    },
    async (req) => svc.getGrant(callerOf(req), params(req).database_id, params(req).user_id),
  );

  app.put(
    '/v1/databases/:database_id/users/:user_id',
    {
      config: { scope: 'databases:write', reach },
      schema: {
        tags,
        operationId: 'putDatabaseGrant',
        summary: "Set a user's privileges on a database",
        description:
          'Exactly these privileges, replacing any before (201 when the user had none on the database, else 200). The user and the database must belong to the same account (404 otherwise). Counts for new sessions as soon as `sync_state` is `in_sync`. Announced as `database_user.updated`.',
        params: GrantParams,
        body: Type.Object({ privileges: Privileges }, { additionalProperties: false }),
        response: { 200: Type.Ref('DatabaseGrant'), 201: Type.Ref('DatabaseGrant') },
      },
    },
    async (req, reply) => {
      const { grant, created } = await svc.putGrant(
        callerOf(req),
        params(req).database_id,
        params(req).user_id,
        req.body.privileges,
      );
      return reply.code(created ? 201 : 200).send(grant);
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
          'Revokes every privilege of the user on this database (204). Sessions already open keep theirs until they reconnect. Announced as `database_user.updated`.',
        summary: "Revoke a user's privileges on a database",
        params: GrantParams,
        response: { 204: Type.Null({ description: 'Revoked' }) },
      },
    },
    async (req, reply) => {
      await svc.removeGrant(callerOf(req), params(req).database_id, params(req).user_id);
      return reply.code(204).send(null);
    },
  );
}

function userRoutes(app: App, svc: DatabasesService): void {
  const tags = ['database-users'];
  const reach = reachOf(svc.loadUser);

  listRoute(app, {
    path: '/v1/database-users',
    tags,
    operationId: 'listDatabaseUsers',
    summary: "List the caller's database users",
    scope: 'databases:read',
    querystring: ListQuery,
    item: 'DatabaseUser',
    list: svc.listUsers,
  });

  app.post(
    '/v1/database-users',
    {
      config: { scope: 'databases:write' },
      schema: {
        tags,
        operationId: 'createDatabaseUser',
        summary: 'Create a database user',
        description:
          "The username must start with the account's username and `_` (422 `invalid_prefix`); unique on the server (409). Either `password` or `generate_password: true` (returned once). `max_database_users` applies (403). The user has no privileges until granted a database.",
        body: Type.Object(
          {
            account_id: Id('acc'),
            username: Name('user', 47),
            password: Type.Optional(Password),
            generate_password: Type.Optional(GeneratePassword),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('DatabaseUserWithPassword') },
      },
    },
    async (req, reply) => sendCreated(reply, '/v1/database-users', await svc.createUser(callerOf(req), req.body)),
  );

  getRoute(app, {
    path: '/v1/database-users',
    prefix: 'dbu',
    tags,
    resource: 'DatabaseUser',
    summary: 'Get a database user',
    scope: 'databases:read',
    reach,
    get: svc.getUser,
  });

  updateRoutes(app, {
    path: '/v1/database-users',
    prefix: 'dbu',
    tags,
    resource: 'DatabaseUser',
    response: 'DatabaseUserWithPassword',
    noun: 'database user',
    scope: 'databases:write',
    reach,
    mutable: { status: UserStatus },
    writeOnly: { password: Password, generate_password: GeneratePassword },
    description:
      'A new `password` (or `generate_password`, returned once) replaces the old one for new logins once `sync_state` is `in_sync`.',
    update: svc.updateUser,
  });

  deleteRoute(app, {
    path: '/v1/database-users',
    prefix: 'dbu',
    tags,
    operationId: 'deleteDatabaseUser',
    summary: 'Delete a database user',
    description: 'Its grants go with it and its open sessions are ended.',
    scope: 'databases:write',
    reach,
    remove: svc.removeUser,
  });
}

export const databaseSchemas = [Database, DatabaseUser, DatabaseUserWithPassword, DatabaseGrant];
