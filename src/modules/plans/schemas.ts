import { Type, type Static } from 'typebox';
import { Id, Name, Nullable, PageQuery, ResourceMeta, StringEnum } from '../../http/schemas.js';

/** Plans as the API shows and takes them: each shape declared once (validator, type, document). */

const Limit = (description: string) => Type.Integer({ minimum: 0, maximum: 2_000_000_000, format: 'int32', description });
/** Every limit of a plan; an account's overrides and effective limits have the same fields. */
export const LimitSchemas = {
  max_sites: Limit('Websites'),
  max_domains: Limit('Domains'),
  max_email_accounts: Limit('Mailboxes'),
  max_email_quota_mb: Limit('Largest quota of one mailbox, MiB'),
  disk_quota_mb: Limit('Disk for the whole account, MiB'),
  max_backups: Limit('Retained backups'),
  max_dns_records_per_domain: Limit('DNS records per domain'),
  max_databases: Limit('MariaDB databases. Optional when a plan is created or replaced: 10 if never given.'),
  max_database_users: Limit('MariaDB users. Optional when a plan is created or replaced: 10 if never given.'),
  max_database_connections: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    format: 'int32',
    description:
      "Connections each of the account's MariaDB users may hold at once (MariaDB's `MAX_USER_CONNECTIONS`; one more is refused with error 1226), so that one account's scripts cannot take every connection of a shared database server. Optional when a plan is created or replaced: 20 if never given.",
  }),
  php_workers: Type.Integer({
    minimum: 1,
    maximum: 1000,
    format: 'int32',
    description:
      "PHP processes an account may run at once per PHP version (its pool's `pm.max_children`). Optional when a plan is created or replaced: 5 if never given.",
  }),
  max_cron_jobs: Limit('Cron jobs. Optional when a plan is created or replaced: 10 if never given.'),
  cron_min_interval_minutes: Type.Integer({
    minimum: 1,
    maximum: 1440,
    format: 'int32',
    description:
      'The shortest time between two runs of one cron job, counted over its expanded schedule (a schedule firing more often is a 422 `schedule_too_frequent`). Optional when a plan is created or replaced: 5 if never given.',
  }),
  max_ssh_keys: Limit('SSH keys. Optional when a plan is created or replaced: 10 if never given.'),
};
export type LimitField = keyof typeof LimitSchemas;
export type Limits = Record<LimitField, number>;
export const LIMIT_FIELDS = Object.keys(LimitSchemas) as LimitField[];

export const SshAccess = StringEnum(['disabled', 'sftp', 'shell'] as const, {
  description:
    "`disabled`: no SSH login; `sftp`: file transfer only, inside a chroot of the account's files; `shell`: a login shell as the account's Unix user.",
});
export type SshAccess = Static<typeof SshAccess>;
const PlanSshAccess = {
  ...SshAccess,
  description:
    'The most SSH access an account of the plan may turn on. Optional when a plan is created or replaced: `sftp` if never given.',
};

const Features = Type.Array(StringEnum(['ssl', 'php', 'backups'] as const), {
  maxItems: 3,
  uniqueItems: true,
  description:
    "What the plan's accounts may turn on. `ssl`: HTTPS for their sites (`tls.mode` `auto`, the default with it, or `custom`); without it a new site gets `none`, and asking for another mode or uploading a certificate is a 403 `feature_unavailable`. `php`: a `php-*` runtime (else 403). `backups`: for the provider's own offers; backups are not refused without it. Taking a feature away turns nothing off that is in use, as a cPanel feature list governs what may be turned on: a site keeps its HTTPS (renewed) and its PHP. Its other changes keep them, but neither can be turned on again while the plan lacks the feature.",
});
const Description = Type.String({ maxLength: 2000 });

export const Plan = Type.Object(
  {
    id: Id('pln'),
    reseller_id: Nullable(Id('rsl')),
    name: Name,
    description: Description,
    ...LimitSchemas,
    ssh_access: PlanSshAccess,
    features: Features,
    ...ResourceMeta,
  },
  { $id: 'Plan', description: 'Limits for hosting accounts. `reseller_id` null: a global plan of the operator.' },
);
export type Plan = Static<typeof Plan>;
export type PlanFeature = Plan['features'][number];

// Limits added after the first plans existed are optional: a client written before them keeps
// working (its plans get the default, and a replacement that leaves them out keeps the value).
const {
  max_databases,
  max_database_users,
  max_database_connections,
  php_workers,
  max_cron_jobs,
  cron_min_interval_minutes,
  max_ssh_keys,
  ...firstLimits
} = LimitSchemas;
export const PlanMutable = {
  name: Name,
  description: Description,
  ...firstLimits,
  max_databases: Type.Optional(max_databases),
  max_database_users: Type.Optional(max_database_users),
  max_database_connections: Type.Optional(max_database_connections),
  php_workers: Type.Optional(php_workers),
  max_cron_jobs: Type.Optional(max_cron_jobs),
  cron_min_interval_minutes: Type.Optional(cron_min_interval_minutes),
  max_ssh_keys: Type.Optional(max_ssh_keys),
  ssh_access: Type.Optional(PlanSshAccess),
  features: Features,
};
export type PlanPatch = Partial<Static<ReturnType<typeof Type.Object<typeof PlanMutable>>>>;

export const CreatePlan = Type.Object(
  { ...PlanMutable, description: Type.Optional(Description), features: Type.Optional(Features) },
  { additionalProperties: false },
);
export type CreatePlan = Static<typeof CreatePlan>;

export const PlanListQuery = Type.Object(
  {
    ...PageQuery,
    name: Type.Optional(Name),
    q: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive substring of the plan's name." })),
  },
  { additionalProperties: false },
);
export type PlanListQuery = Static<typeof PlanListQuery>;

export const planSchemas = [Plan];
