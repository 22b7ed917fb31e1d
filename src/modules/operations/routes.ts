import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { sendResource } from '../../http/etag.js';
import { listRoute } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { Id, IdParams, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp, Failure } from '../../http/schemas.js';
import type { OperationsService } from './service.js';

const Status = StringEnum(['queued', 'running', 'succeeded', 'failed', 'canceled'] as const);
const OpType = Type.String({
  maxLength: 50,
  description:
    'site.provision, site.delete, site.deploy, site.certificate.issue, backup.create, backup.restore, account.terminate, dns.change.apply',
});

const OperationSchema = Type.Object(
  {
    id: Id('op'),
    type: OpType,
    status: Status,
    progress: Type.Integer({ minimum: 0, maximum: 100, format: 'int32' }),
    resource: Type.Object({ type: Type.String({ maxLength: 50 }), id: Type.String({ maxLength: 100 }) }),
    account_id: Nullable(Id('acc')),
    error: Nullable(Failure),
    started_at: Nullable(Timestamp),
    finished_at: Nullable(Timestamp),
    ...ResourceMeta,
  },
  { $id: 'Operation', description: 'Asynchronous work on real systems. Survives restarts; a queued one can be canceled.' },
);

export function operationRoutes(app: App, svc: OperationsService): void {
  const tags = ['operations'];
  listRoute(app, {
    path: '/v1/operations',
    tags,
    operationId: 'listOperations',
    summary: 'List operations',
    description: "Operations on resources in the token's reach; any scope may read them.",
    querystring: Type.Object(
      {
        ...PageQuery,
        status: Type.Optional(Status),
        type: Type.Optional(OpType),
        resource_id: Type.Optional(Type.String({ maxLength: 100 })),
        account_id: Type.Optional(Id('acc')),
      },
      { additionalProperties: false },
    ),
    item: 'Operation',
    list: svc.list,
  });

  app.get(
    '/v1/operations/:operation_id',
    {
      schema: {
        tags,
        operationId: 'getOperation',
        description:
          'The state of asynchronous work (`queued`, `running`, `succeeded`, `failed`, `canceled`), with `progress` and, when it ended, its `result` or `error`. Poll it, or subscribe to its webhook events.',
        summary: 'Get an operation',
        params: IdParams('op'),
        response: { 200: Type.Ref('Operation') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.get(callerOf(req), req.params.operation_id)),
  );

  app.post(
    '/v1/operations/:operation_id/cancel',
    {
      schema: {
        tags,
        operationId: 'cancelOperation',
        summary: 'Cancel a queued operation',
        description:
          "Needs the write scope of the resource's area (accounts:write for account.terminate). 409 invalid_state once it runs.",
        params: IdParams('op'),
        response: { 200: Type.Ref('Operation') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.cancel(callerOf(req), req.params.operation_id)),
  );
}

export const operationSchemas = [OperationSchema];
