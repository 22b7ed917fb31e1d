import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { deleteRoute, getRoute, listRoute, reachOf, updateRoutes } from '../../http/crud.js';
import { sendCreated, type App } from '../../http/routes.js';
import { Id, Name, Nullable, PageQuery, ResourceMeta, StringEnum } from '../../http/schemas.js';
import type { PlansService } from './service.js';

const Limit = (description: string) => Type.Integer({ minimum: 0, maximum: 2_000_000_000, format: 'int32', description });
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
  php_workers: Type.Integer({
    minimum: 1,
    maximum: 1000,
    format: 'int32',
    description:
      "PHP processes an account may run at once per PHP version (its pool's `pm.max_children`). Optional when a plan is created or replaced: 5 if never given.",
  }),
};
const Features = Type.Array(StringEnum(['ssl', 'php', 'backups'] as const), { maxItems: 3, uniqueItems: true });
const Description = Type.String({ maxLength: 2000 });

const Plan = Type.Object(
  {
    id: Id('pln'),
    reseller_id: Nullable(Id('rsl')),
    name: Name,
    description: Description,
    ...LimitSchemas,
    features: Features,
    ...ResourceMeta,
  },
  { $id: 'Plan', description: 'Limits for hosting accounts. `reseller_id` null: a global plan of the operator.' },
);
// Limits added after the first plans existed are optional: a client written before them keeps
// working (its plans get the default, and a replacement that leaves them out keeps the value).
const { max_databases, max_database_users, php_workers, ...firstLimits } = LimitSchemas;
const Mutable = {
  name: Name,
  description: Description,
  ...firstLimits,
  max_databases: Type.Optional(max_databases),
  max_database_users: Type.Optional(max_database_users),
  php_workers: Type.Optional(php_workers),
  features: Features,
};
const CreateBody = Type.Object(
  { ...Mutable, description: Type.Optional(Description), features: Type.Optional(Features) },
  { additionalProperties: false },
);

export function planRoutes(app: App, svc: PlansService): void {
  const path = '/v1/plans';
  const tags = ['plans'];
  const reach = reachOf(svc.load);

  listRoute(app, {
    path,
    tags,
    operationId: 'listPlans',
    summary: 'List plans',
    description: "Global plans and, for resellers and their accounts, the reseller's own.",
    scope: 'plans:read',
    querystring: Type.Object(
      {
        ...PageQuery,
        name: Type.Optional(Name),
        q: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive substring of the plan's name." })),
      },
      { additionalProperties: false },
    ),
    item: 'Plan',
    list: svc.list,
  });

  app.post(
    path,
    {
      config: { scope: 'plans:write' },
      schema: {
        tags,
        operationId: 'createPlan',
        summary: 'Create a plan',
        description: 'Operators create global plans, resellers their own.',
        body: CreateBody,
        response: { 201: Type.Ref('Plan') },
      },
    },
    async (req, reply) => sendCreated(reply, path, await svc.create(callerOf(req), req.body)),
  );

  getRoute(app, {
    path,
    prefix: 'pln',
    tags,
    resource: 'Plan',
    summary: 'Get a plan',
    scope: 'plans:read',
    reach,
    get: svc.get,
  });

  updateRoutes(app, {
    path,
    prefix: 'pln',
    tags,
    resource: 'Plan',
    noun: 'plan',
    scope: 'plans:write',
    reach,
    mutable: Mutable,
    update: svc.update,
  });

  deleteRoute(app, {
    path,
    prefix: 'pln',
    tags,
    operationId: 'deletePlan',
    summary: 'Delete a plan no account uses',
    description: 'Refused with 409 `in_use` while hosting accounts use the plan: move them to another plan first.',
    scope: 'plans:write',
    reach,
    remove: svc.remove,
  });
}

export const planSchemas = [Plan];
