import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { ifMatchVersion, sendResource } from '../../http/etag.js';
import { listRoute, reachOf, updateRoutes } from '../../http/crud.js';
import { sendAccepted, sendCreated, type App } from '../../http/routes.js';
import {
  Email,
  Id,
  IdParams,
  IfMatchHeaders,
  Name,
  Nullable,
  PageQuery,
  ResourceMeta,
  StringEnum,
  Timestamp,
} from '../../http/schemas.js';
import { LimitSchemas } from '../plans/index.js';
import type { AccountsService } from './service.js';

const Status = StringEnum(['active', 'suspended', 'terminating'] as const);
const Username = Type.String({
  pattern: '^[a-z][a-z0-9]{2,31}$',
  minLength: 3,
  maxLength: 32,
  description: 'Unique and immutable.',
});
const Limits = Type.Object(LimitSchemas, { description: "The plan's limits with the account's overrides applied." });
const Overrides = Type.Object(
  Object.fromEntries(Object.entries(LimitSchemas).map(([k, v]) => [k, Type.Optional(v)])) as {
    [K in keyof typeof LimitSchemas]: ReturnType<typeof Type.Optional<(typeof LimitSchemas)[K]>>;
  },
  { additionalProperties: false, description: "Per-account limits that replace the plan's." },
);
const Count = (d: string) => Type.Integer({ minimum: 0, maximum: 2_000_000_000, format: 'int32', description: d });
const UsageSchema = Type.Object({
  sites: Count('Websites'),
  domains: Count('Domains'),
  email_accounts: Count('Mailboxes'),
  databases: Count('MariaDB databases'),
  database_users: Count('MariaDB users'),
  disk_bytes: Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    format: 'int64',
    description: "Measured from the files on disk, plus the databases' size on the database server",
  }),
  backups: Count('Retained backups'),
});

const Account = Type.Object(
  {
    id: Id('acc'),
    username: Username,
    display_name: Name,
    contact_email: Email,
    plan_id: Id('pln'),
    reseller_id: Nullable(Id('rsl')),
    status: Status,
    suspension: Nullable(Type.Object({ reason: Type.String({ maxLength: 500 }), suspended_at: Timestamp })),
    limits: Limits,
    limit_overrides: Overrides,
    usage: Type.Optional(
      Type.Unsafe({
        ...UsageSchema,
        description: 'Live usage; present on single-account responses, omitted from lists (it is measured from disk).',
      }),
    ),
    ...ResourceMeta,
  },
  { $id: 'Account', description: 'A hosting account. States: active ⇄ suspended; active|suspended → terminating → gone.' },
);
const AccountWithOperation = Type.Object(
  { ...Account.properties, operation: Type.Ref('Operation') },
  { $id: 'AccountTermination' },
);
const Mutable = { display_name: Name, contact_email: Email, plan_id: Id('pln'), limit_overrides: Overrides };
const CreateBody = Type.Object(
  {
    username: Username,
    display_name: Type.Optional(Name),
    contact_email: Email,
    plan_id: Id('pln'),
    reseller_id: Type.Optional(Nullable(Id('rsl'))),
    limit_overrides: Type.Optional(Overrides),
  },
  { additionalProperties: false },
);

export function accountRoutes(app: App, svc: AccountsService): void {
  const path = '/v1/accounts';
  const tags = ['accounts'];
  const reach = reachOf(svc.load);
  const params = IdParams('acc');
  const item = { params, response: { 200: Type.Ref('Account') } };

  listRoute(app, {
    path,
    tags,
    operationId: 'listAccounts',
    summary: 'List hosting accounts',
    scope: 'accounts:read',
    querystring: Type.Object(
      {
        ...PageQuery,
        status: Type.Optional(Status),
        reseller_id: Type.Optional(Id('rsl')),
        plan_id: Type.Optional(Id('pln')),
        username: Type.Optional(Type.String({ maxLength: 32 })),
        q: Type.Optional(
          Type.String({ maxLength: 200, description: 'Case-insensitive substring of the username or the display name.' }),
        ),
        updated_since: Type.Optional(Timestamp),
      },
      { additionalProperties: false },
    ),
    item: 'Account',
    list: svc.list,
  });

  app.post(
    path,
    {
      config: { scope: 'accounts:write' },
      schema: {
        tags,
        operationId: 'createAccount',
        summary: 'Create a hosting account',
        description: "`reseller_id` is the caller's for resellers; operators may set it.",
        body: CreateBody,
        response: { 201: Type.Ref('Account') },
      },
    },
    async (req, reply) => sendCreated(reply, path, await svc.create(callerOf(req), req.body)),
  );

  app.get(
    `${path}/:account_id`,
    {
      config: { scope: 'accounts:read', reach },
      schema: {
        tags,
        operationId: 'getAccount',
        description:
          'The account with its effective `limits` (plan plus overrides) and its live `usage`. The `ETag` follows `version`; `usage` is measured and not part of it.',
        summary: 'Get a hosting account',
        ...item,
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.get(callerOf(req), req.params.account_id)),
  );

  updateRoutes(app, {
    path,
    prefix: 'acc',
    tags,
    resource: 'Account',
    noun: 'hosting account',
    description: 'A plan (or limit override) whose limits the usage exceeds is refused: 403 quota_exceeded listing each limit.',
    scope: 'accounts:write',
    reach,
    mutable: Mutable,
    update: svc.update,
  });

  app.delete(
    `${path}/:account_id`,
    {
      config: { scope: 'accounts:write', reach },
      schema: {
        tags,
        operationId: 'terminateAccount',
        summary: 'Terminate a hosting account',
        description:
          '202: the account turns `terminating`; an operation removes its sites, mailboxes, zones, backups and tokens, then the account (404 afterwards). A repeated DELETE returns the same operation.',
        params,
        headers: IfMatchHeaders,
        response: { 202: Type.Ref('AccountTermination') },
      },
    },
    async (req, reply) => sendAccepted(reply, await svc.terminate(callerOf(req), req.params.account_id, ifMatchVersion(req))),
  );

  app.post(
    `${path}/:account_id/suspend`,
    {
      config: { scope: 'accounts:write', reach },
      schema: {
        tags,
        operationId: 'suspendAccount',
        summary: 'Suspend a hosting account',
        description: 'Its resources become read-only for its own principal.',
        params,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false }),
        response: { 200: Type.Ref('Account') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.suspend(callerOf(req), req.params.account_id, req.body.reason)),
  );

  app.post(
    `${path}/:account_id/unsuspend`,
    {
      config: { scope: 'accounts:write', reach },
      schema: {
        tags,
        operationId: 'unsuspendAccount',
        description:
          'Returns an `active` account: sites serve again and logins are allowed again. Announced as `account.unsuspended`.',
        summary: 'Unsuspend a hosting account',
        ...item,
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.unsuspend(callerOf(req), req.params.account_id)),
  );

  app.get(
    `${path}/:account_id/usage`,
    {
      config: { scope: 'accounts:read', reach },
      schema: {
        tags,
        operationId: 'getAccountUsage',
        summary: 'Usage against limits',
        description: 'Measured now: counts from the database, disk from the files.',
        params,
        response: {
          200: Type.Object({
            account_id: Id('acc'),
            limits: Limits,
            usage: UsageSchema,
            exceeded: Type.Array(
              Type.Object({
                limit: Type.String({ maxLength: 50 }),
                allowed: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
                usage: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
              }),
              { maxItems: 10 },
            ),
          }),
        },
      },
    },
    async (req) => svc.usage(callerOf(req), req.params.account_id),
  );
}

export const accountSchemas = [Account, AccountWithOperation];
