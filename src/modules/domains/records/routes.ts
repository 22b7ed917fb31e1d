import { Type } from 'typebox';
import { callerOf } from '../../../http/auth.js';
import { createRoute, itemRoute } from '../../../http/crud.js';
import { etagOf, ifMatchVersion } from '../../../http/etag.js';
import { pageParams, sendPage } from '../../../http/pagination.js';
import { PatchBody, type App } from '../../../http/routes.js';
import { IfMatchHeaders, Page } from '../../../http/schemas.js';
import { unsupportedMediaType } from '../../../lib/errors.js';
import { domainOf, domainReach } from '../routes.js';
import { DomainParams } from '../schemas.js';
import type { DomainsService } from '../service.js';
import { CreateRecord, DryRunQuery, RecordListQuery, RecordMutable, RecordParams, SyncBody, SyncResponse } from './schemas.js';
import type { RecordsService } from './service.js';

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
        querystring: RecordListQuery,
        response: { 200: Page(Type.Ref('DnsRecord')) },
      },
    },
    async (req, reply) => {
      const page = pageParams(req.query);
      return sendPage(req, reply, await domains.listRecords(callerOf(req), req.params.domain, req.query, page), page);
    },
  );

  createRoute(app, {
    path: '/v1/domains/:domain/records',
    tags,
    operationId: 'createDnsRecord',
    summary: 'Add a record',
    description: RULES,
    scope: 'dns:write',
    params: DomainParams,
    reach,
    body: CreateRecord,
    response: 'DnsRecord',
    create: (caller, body, req) => svc.create(caller, domainOf(req), body),
    location: (record) => `/v1/domains/${record.domain_id}/records`,
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
        querystring: DryRunQuery,
        // Replacing the zone whole needs its ETag: 428 without one.
        'x-errors': ['precondition_required'],
        body: SyncBody,
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

  itemRoute(app, {
    method: 'GET',
    path: '/v1/domains/:domain/records/:record_id',
    tags,
    operationId: 'getDnsRecord',
    summary: 'Get a record',
    description: 'One record of the zone, with its `ETag` (its `version`). 404 for a record of another zone or out of reach.',
    scope: 'dns:read',
    reach,
    params: RecordParams,
    response: 'DnsRecord',
    run: (caller, p) => domains.getRecord(caller, p.domain, p.record_id),
  });

  const write = {
    tags,
    scope: 'dns:write' as const,
    reach,
    params: RecordParams,
    headers: IfMatchHeaders,
    response: 'DnsRecord',
  };
  itemRoute(app, {
    ...write,
    method: 'PUT',
    path: '/v1/domains/:domain/records/:record_id',
    operationId: 'replaceDnsRecord',
    summary: 'Replace a record',
    description: RULES,
    body: Type.Object(RecordMutable, { additionalProperties: false }),
    run: (caller, p, body, req) => svc.update(caller, p.domain, p.record_id, body, ifMatchVersion(req)),
  });
  itemRoute(app, {
    ...write,
    method: 'PATCH',
    path: '/v1/domains/:domain/records/:record_id',
    operationId: 'updateDnsRecord',
    summary: 'Update a record (JSON Merge Patch)',
    description: RULES,
    body: PatchBody(RecordMutable),
    run: (caller, p, patch, req) => svc.update(caller, p.domain, p.record_id, patch, ifMatchVersion(req)),
  });

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
        querystring: DryRunQuery,
        // Replacing the zone whole needs its ETag: 428 without one.
        'x-errors': ['precondition_required'],
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
