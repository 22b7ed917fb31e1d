import { Type, type Static } from 'typebox';
import { withRemovableMembers } from '../../http/routes.js';
import { Email, Id, Name, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';
import { ACCOUNT_USERNAME_PATTERN } from '../../lib/account-username.js';
import { LimitSchemas } from '../plans/index.js';

/** Hosting accounts as the API shows and takes them: each shape declared once (validator, type, document). */

const Status = StringEnum(['active', 'suspended', 'terminating'] as const);
export type AccountStatus = Static<typeof Status>;
const Username = Type.String({
  pattern: ACCOUNT_USERNAME_PATTERN,
  minLength: 3,
  maxLength: 32,
  description: 'Unique and immutable.',
});
const Limits = Type.Object(LimitSchemas, { description: "The plan's limits with the account's overrides applied." });
const Overrides = withRemovableMembers(
  Type.Partial(Type.Object(LimitSchemas), {
    additionalProperties: false,
    description: "Per-account limits that replace the plan's; in a merge patch, `null` removes one.",
  }),
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
  cron_jobs: Count('Cron jobs'),
  ssh_keys: Count('SSH keys'),
  bandwidth_bytes: Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    format: 'int64',
    description:
      "What the account's sites sent this calendar month (UTC): the response bodies' bytes as the web server logged them (nginx's access logs, counted every minute by the process or agent that serves the site; the embedded web driver serves nothing and counts none)",
  }),
  bandwidth_daily: Type.Array(
    Type.Object(
      {
        date: Type.String({ format: 'date', maxLength: 10 }),
        bytes: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' }),
      },
      { additionalProperties: false },
    ),
    {
      maxItems: 31,
      description: 'The days of this calendar month (UTC) with traffic, oldest first; they add up to `bandwidth_bytes`.',
    },
  ),
});
export type Usage = Static<typeof UsageSchema>;

const Placement = Type.Object(
  { web: Id('srv'), mail: Id('srv'), database: Id('srv') },
  { description: 'The servers the account lives on, one per role (`GET /v1/servers/{server_id}`).' },
);
export type Placement = Static<typeof Placement>;

export const Account = Type.Object(
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
    placement: Placement,
    usage: Type.Optional(
      Type.Unsafe<Usage>({
        ...UsageSchema,
        description: 'Live usage; present on single-account responses, omitted from lists (it is measured from disk).',
      }),
    ),
    ...ResourceMeta,
  },
  { $id: 'Account', description: 'A hosting account. States: active ⇄ suspended; active|suspended → terminating → gone.' },
);
export type Account = Static<typeof Account>;

const AccountWithOperation = Type.Object(
  { ...Account.properties, operation: Type.Ref('Operation') },
  { $id: 'AccountTermination' },
);

export const AccountUsage = Type.Object({
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
});

export const AccountMutable = { display_name: Name, contact_email: Email, plan_id: Id('pln'), limit_overrides: Overrides };
export type AccountFields = Static<ReturnType<typeof Type.Object<typeof AccountMutable>>>;

export const CreateAccount = Type.Object(
  {
    username: Username,
    display_name: Type.Optional(Name),
    contact_email: Email,
    plan_id: Id('pln'),
    reseller_id: Type.Optional(Nullable(Id('rsl'))),
    limit_overrides: Type.Optional(Overrides),
    placement: Type.Optional(
      Type.Partial(Placement, {
        additionalProperties: false,
        description:
          'Operator only: the server of a role, which must have that role. A role left out is placed by the default policy: the online server with the role, placement enabled and capacity left that holds the fewest accounts (409 `no_capacity` naming the role when there is none).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateAccount = Static<typeof CreateAccount>;

export const AccountListQuery = Type.Object(
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
);
export type AccountListQuery = Static<typeof AccountListQuery>;

/** An account's usage as last measured, for billing systems' usage updates (`GET /v1/usage`). */
const UsageRecord = Type.Object(
  {
    id: Id('acc', "The account's id."),
    username: Type.String({ maxLength: 32 }),
    reseller_id: Nullable(Id('rsl')),
    usage: Nullable(UsageSchema),
    measured_at: Nullable(Timestamp),
    updated_at: Nullable(Timestamp),
  },
  {
    $id: 'AccountUsageRecord',
    description:
      'The usage last measured (every `BERTH_USAGE_METER_MS`, 15 minutes by default); `updated_at` is when it last changed. Null until first measured.',
  },
);

export const UsageListQuery = Type.Object(
  {
    ...PageQuery,
    reseller_id: Type.Optional(Id('rsl')),
    updated_since: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);
export type UsageListQuery = Static<typeof UsageListQuery>;

export const accountSchemas = [Account, AccountWithOperation, UsageRecord];
