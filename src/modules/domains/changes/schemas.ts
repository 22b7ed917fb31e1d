import { Type, type Static } from 'typebox';
import { Id, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../../http/schemas.js';
import { Content, RecordName, Ttl } from '../records/schemas.js';
import { DomainParam, RecordType } from '../schemas.js';

/** DNS change sets as the API shows and takes them: each shape declared once (validator, type, document). */

const Count = Type.Integer({ minimum: 0, maximum: 1_000_000, format: 'int32' });

const ChangeRecord = Type.Object(
  { name: RecordName, type: RecordType, ttl: Type.Optional(Ttl), content: Content },
  { additionalProperties: false },
);
const ChangeUpdate = Type.Object(
  {
    id: Id('rec'),
    name: Type.Optional(RecordName),
    type: Type.Optional(RecordType),
    ttl: Type.Optional(Ttl),
    content: Type.Optional(Content),
  },
  { additionalProperties: false },
);
const ChangeLists = {
  create: Type.Array(ChangeRecord, { maxItems: 10_000 }),
  update: Type.Array(ChangeUpdate, { maxItems: 10_000 }),
  delete: Type.Array(Id('rec'), { maxItems: 10_000 }),
};
export const DnsChange = Type.Object(
  {
    id: Id('chg'),
    domain_id: Id('dom'),
    status: StringEnum(['scheduled', 'applied', 'failed', 'canceled'] as const),
    apply_at: Nullable(Timestamp),
    applied_at: Nullable(Timestamp),
    ...ChangeLists,
    result: Nullable(
      Type.Object({
        created: Count,
        updated: Count,
        deleted: Count,
        serial: Type.Integer({ minimum: 1, maximum: 4294967295, format: 'int64' }),
      }),
    ),
    error: Nullable(
      Type.Unsafe<Record<string, unknown>>({
        type: 'object',
        additionalProperties: true,
        description: 'Why a scheduled change failed: `code`, `detail`, `errors`.',
      }),
    ),
    ...ResourceMeta,
  },
  { $id: 'DnsChange', description: 'An atomic set of record changes, applied at once or at `apply_at`.' },
);
export type DnsChange = Static<typeof DnsChange>;

export const CreateDnsChange = Type.Object(
  {
    create: Type.Optional(ChangeLists.create),
    update: Type.Optional(ChangeLists.update),
    delete: Type.Optional(ChangeLists.delete),
    apply_at: Type.Optional(Nullable(Timestamp)),
  },
  { additionalProperties: false },
);
export type CreateDnsChange = Static<typeof CreateDnsChange>;
/** The records a change set creates, updates and deletes. */
export type ChangeRequest = Omit<CreateDnsChange, 'apply_at'>;

/** `?dry_run=true`: what the set would do, nothing applied. */
export const DryRunResult = Type.Object({
  dry_run: Type.Literal(true),
  result: Type.Object({ created: Count, updated: Count, deleted: Count }),
});

export const ChangeListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(StringEnum(['scheduled', 'applied', 'failed', 'canceled'] as const)) },
  { additionalProperties: false },
);
export const ChangeParams = Type.Object({ domain: DomainParam, change_id: Id('chg') }, { additionalProperties: false });

export const changeSchemas = [DnsChange];
