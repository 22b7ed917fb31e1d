import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { ifMatchVersion, sendResource } from '../../http/etag.js';
import { pageParams, sendPage } from '../../http/pagination.js';
import { PatchBody, paramId, sendCreated, type App } from '../../http/routes.js';
import { Id, IdParams, Name, Nullable, Page, PageQuery, ResourceMeta, StringEnum } from '../../http/schemas.js';
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
const Mutable = { name: Name, description: Description, ...LimitSchemas, features: Features };
const CreateBody = Type.Object(
  { ...Mutable, description: Type.Optional(Description), features: Type.Optional(Features) },
  { additionalProperties: false },
);

export function planRoutes(app: App, svc: PlansService): void {
  const tags = ['plans'];
  const reach = async (req: Parameters<typeof paramId>[0]) => svc.load(callerOf(req), paramId(req));
  const item = { params: IdParams('pln'), response: { 200: Type.Ref('Plan') } };

  app.get(
    '/v1/plans',
    {
      config: { scope: 'plans:read' },
      schema: {
        tags,
        operationId: 'listPlans',
        summary: 'List plans',
        description: "Global plans and, for resellers and their accounts, the reseller's own.",
        querystring: Type.Object(
          { ...PageQuery, name: Type.Optional(Name), q: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
        response: { 200: Page(Type.Ref('Plan')) },
      },
    },
    async (req, reply) => {
      const page = pageParams(req.query);
      return sendPage(req, reply, await svc.list(callerOf(req), req.query, page), page);
    },
  );

  app.post(
    '/v1/plans',
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
    async (req, reply) => sendCreated(reply, '/v1/plans', await svc.create(callerOf(req), req.body)),
  );

  app.get(
    '/v1/plans/:id',
    { config: { scope: 'plans:read', reach }, schema: { tags, operationId: 'getPlan', summary: 'Get a plan', ...item } },
    async (req, reply) => sendResource(req, reply, await svc.get(callerOf(req), req.params.id)),
  );

  app.put(
    '/v1/plans/:id',
    {
      config: { scope: 'plans:write', reach },
      schema: {
        tags,
        operationId: 'replacePlan',
        summary: 'Replace a plan',
        body: Type.Object(Mutable, { additionalProperties: false }),
        ...item,
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.update(callerOf(req), req.params.id, req.body, ifMatchVersion(req))),
  );

  app.patch(
    '/v1/plans/:id',
    {
      config: { scope: 'plans:write', reach },
      schema: { tags, operationId: 'updatePlan', summary: 'Update a plan (JSON Merge Patch)', body: PatchBody(Mutable), ...item },
    },
    async (req, reply) => sendResource(req, reply, await svc.update(callerOf(req), req.params.id, req.body, ifMatchVersion(req))),
  );

  app.delete(
    '/v1/plans/:id',
    {
      config: { scope: 'plans:write', reach },
      schema: {
        tags,
        operationId: 'deletePlan',
        summary: 'Delete a plan no account uses',
        params: IdParams('pln'),
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    async (req, reply) => {
      await svc.remove(callerOf(req), req.params.id, ifMatchVersion(req));
      return reply.code(204).send(null);
    },
  );
}

export const planSchemas = [Plan];
