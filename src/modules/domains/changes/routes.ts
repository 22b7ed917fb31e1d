import { Type } from 'typebox';
import { callerOf } from '../../../http/auth.js';
import { listRoute } from '../../../http/crud.js';
import { sendResource } from '../../../http/etag.js';
import { sendCreated, type App } from '../../../http/routes.js';
import { Id, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../../http/schemas.js';
import { DomainParam, DomainParams, RecordType, domainOf, domainReach } from '../routes.js';
import type { DomainsService } from '../service.js';
import type { ChangesService } from './service.js';
import { Content, RecordName, Ttl } from '../records/routes.js';

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
const DnsChange = Type.Object(
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
export const dnsSchemas = [DnsChange];

export function dnsChangeRoutes(app: App, domains: DomainsService, svc: ChangesService): void {
  const tags = ['dns'];
  const reach = domainReach(domains);
  const ChangeParams = Type.Object({ domain: DomainParam, change_id: Id('chg') }, { additionalProperties: false });

  app.post(
    '/v1/domains/:domain/changes',
    {
      config: { scope: 'dns:write', reach },
      schema: {
        tags,
        operationId: 'createDnsChange',
        summary: 'Apply or schedule an atomic change set',
        description:
          'All or nothing; field errors point into the set (`/create/1/content`). Without `apply_at` (or with one in the past) it is applied now: 201 `applied`. With `apply_at` in the future it is validated now, `scheduled`, and applied then by whichever process runs the job — validated again at that time, `failed` with the problem if it no longer fits. `dry_run=true` validates only (200).',
        params: DomainParams,
        querystring: Type.Object({ dry_run: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
        body: Type.Object(
          {
            create: Type.Optional(ChangeLists.create),
            update: Type.Optional(ChangeLists.update),
            delete: Type.Optional(ChangeLists.delete),
            apply_at: Type.Optional(Nullable(Timestamp)),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            dry_run: Type.Literal(true),
            result: Type.Object({ created: Count, updated: Count, deleted: Count }),
          }),
          201: Type.Ref('DnsChange'),
        },
      },
    },
    async (req, reply) => {
      const result = await svc.create(callerOf(req), req.params.domain, req.body, req.query.dry_run ?? false);
      if ('dry_run' in result) return reply.code(200).send(result);
      return sendCreated(reply, `/v1/domains/${result.domain_id}/changes`, result);
    },
  );

  listRoute(app, {
    path: '/v1/domains/:domain/changes',
    tags,
    operationId: 'listDnsChanges',
    summary: "A zone's change sets",
    scope: 'dns:read',
    reach,
    params: DomainParams,
    querystring: Type.Object(
      { ...PageQuery, status: Type.Optional(StringEnum(['scheduled', 'applied', 'failed', 'canceled'] as const)) },
      { additionalProperties: false },
    ),
    item: 'DnsChange',
    list: (caller, query, page, req) => svc.list(caller, domainOf(req), query.status, page),
  });

  app.get(
    '/v1/domains/:domain/changes/:change_id',
    {
      config: { scope: 'dns:read', reach },
      schema: {
        tags,
        operationId: 'getDnsChange',
        description: 'A scheduled or applied change set: its records, `apply_at` and `status`.',
        summary: 'Get a change set',
        params: ChangeParams,
        response: { 200: Type.Ref('DnsChange') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.get(callerOf(req), req.params.domain, req.params.change_id)),
  );

  app.delete(
    '/v1/domains/:domain/changes/:change_id',
    {
      config: { scope: 'dns:write', reach },
      schema: {
        tags,
        operationId: 'cancelDnsChange',
        summary: 'Cancel a scheduled change set',
        description: '200 with the change set, now `canceled`; 409 `invalid_state` once it has run.',
        params: ChangeParams,
        response: { 200: Type.Ref('DnsChange') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.cancel(callerOf(req), req.params.domain, req.params.change_id)),
  );
}
