import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { deleteRoute, getRoute, listRoute, reachOf, updateRoutes } from '../../http/crud.js';
import { sendCreated, type App } from '../../http/routes.js';
import { Email, Id, Name, Nullable, PageQuery, ResourceMeta, StringEnum } from '../../http/schemas.js';
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

export function resellerRoutes(app: App, svc: ResellersService): void {
  const path = '/v1/resellers';
  const tags = ['resellers'];
  const reach = reachOf(svc.load);

  listRoute(app, {
    path,
    tags,
    operationId: 'listResellers',
    summary: 'List resellers',
    description: 'Operators see every reseller; a reseller sees only itself.',
    scope: 'resellers:read',
    querystring: Type.Object(
      {
        ...PageQuery,
        status: Type.Optional(Status),
        q: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive substring of the reseller's name." })),
      },
      { additionalProperties: false },
    ),
    item: 'Reseller',
    list: svc.list,
  });

  app.post(
    path,
    {
      config: { scope: 'resellers:write' },
      schema: {
        tags,
        operationId: 'createReseller',
        description: 'Operator tokens only. A reseller owns plans and hosting accounts; its own tokens reach only those.',
        summary: 'Create a reseller (operator only)',
        body: CreateBody,
        response: { 201: Type.Ref('Reseller') },
      },
    },
    async (req, reply) => sendCreated(reply, path, await svc.create(callerOf(req), req.body)),
  );

  getRoute(app, {
    path,
    prefix: 'rsl',
    tags,
    resource: 'Reseller',
    summary: 'Get a reseller',
    scope: 'resellers:read',
    reach,
    get: svc.get,
  });

  updateRoutes(app, {
    path,
    prefix: 'rsl',
    tags,
    resource: 'Reseller',
    noun: 'reseller',
    scope: 'resellers:write',
    reach,
    mutable: Mutable,
    update: svc.update,
  });

  deleteRoute(app, {
    path,
    prefix: 'rsl',
    tags,
    operationId: 'deleteReseller',
    summary: 'Delete a reseller without accounts',
    description: 'Refused with 409 `in_use` while the reseller has hosting accounts; its own plans and tokens go with it.',
    scope: 'resellers:write',
    reach,
    remove: svc.remove,
  });
}

export const resellerSchemas = [Reseller];
