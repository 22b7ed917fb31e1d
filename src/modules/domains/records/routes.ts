import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { unsupportedMediaType } from '../../../http/errors.js';
import { callerOf } from '../../../http/auth.js';
import { etagOf, ifMatchVersion, sendResource } from '../../../http/etag.js';
import { pageParams, sendPage } from '../../../http/pagination.js';
import { PatchBody, sendCreated, type App } from '../../../http/routes.js';
import { Id, IfMatchHeaders, Page, PageQuery } from '../../../http/schemas.js';
import { DomainParam, DomainParams, RecordType, domainOf, domainReach } from '../routes.js';
import type { DomainsService } from '../service.js';
import type { RecordsService } from './service.js';

export const RecordName = Type.String({
  minLength: 1,
  maxLength: 253,
  description: 'Relative to the zone (`@` for the apex) or absolute with a trailing dot.',
  examples: ['www'],
});
export const Ttl = Type.Integer({
  minimum: 60,
  maximum: 86400,
  format: 'int32',
  description: 'Seconds; shared by every record of a set.',
});
export const Content = Type.String({
  minLength: 1,
  maxLength: 65535,
  description: 'RDATA in presentation format (`10 mail.example.com.`); TXT as plain text (quoted strings are joined).',
  examples: ['192.0.2.10'],
});
const Mutable = { name: RecordName, type: RecordType, ttl: Ttl, content: Content };
const CreateBody = Type.Object(
  { name: RecordName, type: RecordType, ttl: Type.Optional(Ttl), content: Content },
  { additionalProperties: false },
);
const RecordParams = Type.Object({ domain: DomainParam, record_id: Id('rec') }, { additionalProperties: false });

const RULES =
  "Validated against the zone: owner inside the zone, `*` only as the whole leftmost label, CNAME alone at its name and never at the apex, MX/NS/SRV targets host names that are not CNAMEs, one TTL per set, no duplicates, one SPF policy per name, CAA flags 0|128 with issue|issuewild|iodef, SRV owners `_service._proto`. Every failure is a field error; the plan's record limit is 403 `quota_exceeded`. Each write bumps the zone serial once.";

const ZONE_EXAMPLE = `$ORIGIN example.com.
$TTL 3600
@    IN MX    10 mail.example.com.
@    IN TXT   "v=spf1 mx -all"
www  IN A     192.0.2.10
www  IN AAAA  2001:db8::10
`;

export function dnsRoutes(app: App, domains: DomainsService, svc: RecordsService): void {
  const tags = ['dns'];
  const reach = domainReach(domains);
  const recordId = (req: FastifyRequest) => (req.params as { record_id: string }).record_id;

  app.get(
    '/v1/domains/:domain/records',
    {
      config: { scope: 'dns:read', reach },
      schema: {
        tags,
        operationId: 'listDnsRecords',
        description:
          "The zone's records (SOA and NS included), by name and type. `next_cursor` (also in the `Link` header) leads to the next page.",
        summary: "List a zone's records",
        params: DomainParams,
        querystring: Type.Object(
          { ...PageQuery, name: Type.Optional(Type.String({ maxLength: 253 })), type: Type.Optional(RecordType) },
          { additionalProperties: false },
        ),
        response: { 200: Page(Type.Ref('DnsRecord')) },
      },
    },
    async (req, reply) => {
      const page = pageParams(req.query);
      return sendPage(req, reply, await domains.listRecords(callerOf(req), req.params.domain, req.query, page), page);
    },
  );

  app.post(
    '/v1/domains/:domain/records',
    {
      config: { scope: 'dns:write', reach },
      schema: {
        tags,
        operationId: 'createDnsRecord',
        summary: 'Add a record',
        description: RULES,
        params: DomainParams,
        body: CreateBody,
        response: { 201: Type.Ref('DnsRecord') },
      },
    },
    async (req, reply) => {
      const record = await svc.create(callerOf(req), req.params.domain, req.body);
      return sendCreated(reply, `/v1/domains/${record.domain_id}/records`, record);
    },
  );

  const SyncRecord = Type.Object({ name: RecordName, type: Type.String({ maxLength: 10 }), ttl: Ttl, content: Content });
  const SyncRecords = Type.Array(SyncRecord, { maxItems: 100_000 });
  const SyncResponse = Type.Object({
    created: SyncRecords,
    updated: SyncRecords,
    deleted: SyncRecords,
    unchanged: Type.Integer({ minimum: 0, maximum: 1_000_000, format: 'int32' }),
    serial: Type.Integer({ minimum: 1, maximum: 4294967295, format: 'int64' }),
    zone_version: Type.Integer({ minimum: 1, maximum: 2147483647, format: 'int32', description: 'The new zone ETag value.' }),
    dry_run: Type.Boolean(),
  });
  app.put(
    '/v1/domains/:domain/records',
    {
      config: { scope: 'dns:write', reach },
      schema: {
        tags,
        operationId: 'syncDnsRecords',
        summary: "Replace the zone's records with a complete set (sync)",
        description:
          "The body is the complete desired set of unmanaged records. Records matching on owner, type and content stay; a different TTL updates them; the rest are created or deleted — in one transaction with one serial bump, or not at all. `If-Match` with the zone ETag (the domain's) is required: 428 without it, 412 when the zone changed. `dry_run=true` answers the same diff and changes nothing. " +
          RULES,
        params: DomainParams,
        headers: IfMatchHeaders,
        querystring: Type.Object({ dry_run: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
        body: Type.Object({ records: Type.Array(CreateBody, { maxItems: 100_000 }) }, { additionalProperties: false }),
        response: { 200: SyncResponse },
      },
    },
    async (req, reply) => {
      const result = await svc.sync(callerOf(req), req.params.domain, req.body.records, {
        zoneVersion: ifMatchVersion(req),
        dryRun: req.query.dry_run ?? false,
      });
      return reply.header('etag', etagOf(result.zone_version)).send(result);
    },
  );

  app.get(
    '/v1/domains/:domain/records/:record_id',
    {
      config: { scope: 'dns:read', reach },
      schema: {
        tags,
        operationId: 'getDnsRecord',
        description: "404 for a record of another zone or out of reach. The `ETag` follows the record's `version`.",
        summary: 'Get a record',
        params: RecordParams,
        response: { 200: Type.Ref('DnsRecord') },
      },
    },
    async (req, reply) =>
      sendResource(req, reply, await domains.getRecord(callerOf(req), req.params.domain, req.params.record_id)),
  );

  const update = async (req: FastifyRequest, reply: Parameters<typeof sendResource>[1]) =>
    sendResource(
      req,
      reply,
      await svc.update(callerOf(req), domainOf(req), recordId(req), req.body as Record<string, unknown>, ifMatchVersion(req)),
    );
  const item = { params: RecordParams, headers: IfMatchHeaders, response: { 200: Type.Ref('DnsRecord') } };
  app.put(
    '/v1/domains/:domain/records/:record_id',
    {
      config: { scope: 'dns:write', reach },
      schema: {
        tags,
        operationId: 'replaceDnsRecord',
        summary: 'Replace a record',
        description: RULES,
        body: Type.Object(Mutable, { additionalProperties: false }),
        ...item,
      },
    },
    update,
  );
  app.patch(
    '/v1/domains/:domain/records/:record_id',
    {
      config: { scope: 'dns:write', reach },
      schema: {
        tags,
        operationId: 'updateDnsRecord',
        summary: 'Update a record (JSON Merge Patch)',
        description: RULES,
        body: PatchBody(Mutable),
        ...item,
      },
    },
    update,
  );

  app.delete(
    '/v1/domains/:domain/records/:record_id',
    {
      config: { scope: 'dns:write', reach },
      schema: {
        tags,
        operationId: 'deleteDnsRecord',
        summary: 'Delete a record',
        description: 'SOA and apex NS records cannot be deleted (422 `managed`).',
        params: RecordParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    async (req, reply) => {
      await svc.remove(callerOf(req), req.params.domain, req.params.record_id, ifMatchVersion(req));
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/v1/domains/:domain/zone',
    {
      config: { scope: 'dns:write', reach },
      bodyLimit: 5 * 1024 * 1024,
      // The body schema is per media type, so anything else would pass unchecked: refuse it here.
      preValidation: async (req) => {
        if (!/^text\/dns\b/i.test(req.headers['content-type'] ?? '')) {
          throw unsupportedMediaType(req.headers['content-type'], ['text/dns']);
        }
      },
      schema: {
        tags,
        operationId: 'importZone',
        summary: 'Import an RFC 1035 master file',
        description:
          "Replaces the zone's unmanaged records with the file's (its SOA and apex NS are ignored: the API maintains them), exactly like the sync: one transaction, one serial bump, `If-Match` required, `dry_run` supported. `$ORIGIN`, `$TTL`, relative names, parentheses and comments are understood; `$INCLUDE`, classes other than IN and unknown types are refused with their line (`/lines/<n>`). Up to 5 MiB.",
        params: DomainParams,
        headers: IfMatchHeaders,
        querystring: Type.Object({ dry_run: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
        body: { content: { 'text/dns': { schema: Type.String({ maxLength: 5 * 1024 * 1024, examples: [ZONE_EXAMPLE] }) } } },
        response: { 200: SyncResponse },
      },
    },
    async (req, reply) => {
      const result = await svc.importZone(callerOf(req), req.params.domain, req.body as string, {
        zoneVersion: ifMatchVersion(req),
        dryRun: req.query.dry_run ?? false,
      });
      return reply.header('etag', etagOf(result.zone_version)).send(result);
    },
  );

  app.get(
    '/v1/domains/:domain/zone',
    {
      config: { scope: 'dns:read', reach, produces: 'text/dns' },
      schema: {
        tags,
        operationId: 'exportZone',
        summary: 'The zone as an RFC 1035 master file',
        description:
          "What the DNS server serves, in the format `named-checkzone` accepts. The ETag is the zone's (the domain's version).",
        params: DomainParams,
        response: {
          200: {
            description: 'The zone file',
            headers: { ETag: Type.String({ maxLength: 20, description: "The zone's version: `If-Match` of an import." }) },
            content: { 'text/dns': { schema: Type.String({ maxLength: 50_000_000, examples: [ZONE_EXAMPLE] }) } },
          },
        },
      },
    },
    async (req, reply) => {
      const zone = await domains.zoneFile(callerOf(req), req.params.domain);
      void reply.header('etag', etagOf(zone.version));
      return reply.type('text/dns; charset=utf-8').send(zone.text);
    },
  );
}
