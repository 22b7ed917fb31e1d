import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { ifMatchVersion, sendResource } from '../../http/etag.js';
import { pageParams, sendPage } from '../../http/pagination.js';
import { PatchBody, paramId, sendCreated, type App } from '../../http/routes.js';
import { Email, Id, IdParams, Name, Nullable, Page, PageQuery, ResourceMeta, StringEnum } from '../../http/schemas.js';
import type { ResellersService } from './service.js';

const Status = StringEnum(['active', 'suspended'] as const);
const MaxAccounts = Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000, format: 'int32', description: 'null: unlimited' }));

const Reseller = Type.Object(
  { id: Id('rsl'), name: Name, contact_email: Email, status: Status, max_accounts: MaxAccounts, ...ResourceMeta },
  { $id: 'Reseller', description: 'A reseller owns many hosting accounts. Suspending it makes all its accounts read-only.' },
);
const Mutable = { name: Name, contact_email: Email, status: Status, max_accounts: MaxAccounts };
const CreateBody = Type.Object(
  { name: Name, contact_email: Email, status: Type.Optional(Status), max_accounts: Type.Optional(MaxAccounts) },
  { additionalProperties: false },
);
const ReplaceBody = Type.Object(Mutable, { additionalProperties: false });

export function resellerRoutes(app: App, svc: ResellersService): void {
  const tags = ['resellers'];
  const reach = async (req: Parameters<typeof paramId>[0]) => svc.load(callerOf(req), paramId(req));
  const item = { params: IdParams('rsl'), response: { 200: Type.Ref('Reseller') } };

  app.get(
    '/v1/resellers',
    {
      config: { scope: 'resellers:read' },
      schema: {
        tags,
        operationId: 'listResellers',
        summary: 'List resellers',
        description: 'Operators see every reseller; a reseller sees only itself.',
        querystring: Type.Object(
          { ...PageQuery, status: Type.Optional(Status), q: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
        response: { 200: Page(Type.Ref('Reseller')) },
      },
    },
    async (req, reply) => {
      const page = pageParams(req.query);
      const rows = await svc.list(callerOf(req), req.query, page);
      return sendPage(req, reply, rows, page);
    },
  );

  app.post(
    '/v1/resellers',
    {
      config: { scope: 'resellers:write' },
      schema: {
        tags,
        operationId: 'createReseller',
        summary: 'Create a reseller (operator only)',
        body: CreateBody,
        response: { 201: Type.Ref('Reseller') },
      },
    },
    async (req, reply) => sendCreated(reply, '/v1/resellers', await svc.create(callerOf(req), req.body)),
  );

  app.get(
    '/v1/resellers/:id',
    {
      config: { scope: 'resellers:read', reach },
      schema: { tags, operationId: 'getReseller', summary: 'Get a reseller', ...item },
    },
    async (req, reply) => sendResource(req, reply, await svc.get(callerOf(req), req.params.id)),
  );

  app.put(
    '/v1/resellers/:id',
    {
      config: { scope: 'resellers:write', reach },
      schema: { tags, operationId: 'replaceReseller', summary: 'Replace a reseller', body: ReplaceBody, ...item },
    },
    async (req, reply) => sendResource(req, reply, await svc.update(callerOf(req), req.params.id, req.body, ifMatchVersion(req))),
  );

  app.patch(
    '/v1/resellers/:id',
    {
      config: { scope: 'resellers:write', reach },
      schema: {
        tags,
        operationId: 'updateReseller',
        summary: 'Update a reseller (JSON Merge Patch)',
        body: PatchBody(Mutable),
        ...item,
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.update(callerOf(req), req.params.id, req.body, ifMatchVersion(req))),
  );

  app.delete(
    '/v1/resellers/:id',
    {
      config: { scope: 'resellers:write', reach },
      schema: {
        tags,
        operationId: 'deleteReseller',
        summary: 'Delete a reseller without accounts',
        params: IdParams('rsl'),
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    async (req, reply) => {
      await svc.remove(callerOf(req), req.params.id, ifMatchVersion(req));
      return reply.code(204).send(null);
    },
  );
}

export const resellerSchemas = [Reseller];
