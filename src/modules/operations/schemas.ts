import { Type, type Static } from 'typebox';
import { Failure, Id, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';

/** Operations as the API shows them: each shape declared once (validator, type, document). */

const Status = StringEnum(['queued', 'running', 'succeeded', 'failed', 'canceled'] as const);
const OpType = Type.String({
  maxLength: 50,
  description:
    'site.provision, site.delete, site.deploy, site.certificate.issue, backup.create, backup.restore, account.terminate, dns.change.apply',
});

export const OperationSchema = Type.Object(
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

export type Operation = Static<typeof OperationSchema>;

export const OperationListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Status),
    type: Type.Optional(OpType),
    resource_id: Type.Optional(Type.String({ maxLength: 100 })),
    account_id: Type.Optional(Id('acc')),
  },
  { additionalProperties: false },
);
export type OperationListQuery = Static<typeof OperationListQuery>;

export const operationSchemas = [OperationSchema];
