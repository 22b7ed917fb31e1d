import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { listRoute } from '../../http/crud.js';
import { ifMatchVersion, sendResource } from '../../http/etag.js';
import { PatchBody, sendCreated, type App } from '../../http/routes.js';
import { Id, IfMatchHeaders, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp } from '../../http/schemas.js';
import type { DomainsService } from './service.js';
import { RECORD_TYPES } from '../../lib/record-types.js';

const Status = StringEnum(['active', 'suspended'] as const);
export const RecordType = StringEnum(RECORD_TYPES, {
  examples: ['A'],
});
const DomainName = Type.String({
  minLength: 1,
  maxLength: 253,
  description: 'A-label or Unicode; stored as the lowercase A-label.',
});
export const DomainParam = Type.String({
  minLength: 1,
  maxLength: 253,
  description: "The domain's id or name (A-label or Unicode).",
});
const DmarcPolicy = StringEnum(['none', 'quarantine', 'reject'] as const, {
  description: 'What receivers do with mail that fails SPF and DKIM alignment. Default `none` (monitor only).',
});
const Serial = Type.Integer({ minimum: 1, maximum: 4294967295, format: 'int64', description: 'SOA serial, YYYYMMDDnn' });

const Domain = Type.Object(
  {
    id: Id('dom'),
    name: Type.String({ maxLength: 253 }),
    unicode_name: Type.String({ maxLength: 253 }),
    account_id: Id('acc'),
    status: Status,
    nameservers: Type.Array(Type.String({ maxLength: 253 }), { maxItems: 20 }),
    dns: Type.Object({ serial: Serial, record_count: Type.Integer({ minimum: 0, maximum: 1_000_000, format: 'int32' }) }),
    mail_enabled: Type.Boolean(),
    dmarc: Type.Object(
      {
        policy: DmarcPolicy,
        rua: Nullable(Type.String({ maxLength: 254, description: 'Where aggregate reports go (`rua=mailto:`).' })),
      },
      { description: 'The DMARC policy published as the managed `_dmarc` TXT record while mail is enabled.' },
    ),
    catch_all: Nullable(
      Type.String({ maxLength: 254, description: 'Where mail to unknown addresses of the domain goes; null: refused.' }),
    ),
    sync_state: StringEnum(['pending', 'in_sync', 'error'] as const, {
      description:
        'Whether the DNS server serves the current zone; `error` with `sync_error` while applies fail (they are retried).',
    }),
    sync_error: Nullable(Type.String({ maxLength: 1000 })),
    ...ResourceMeta,
  },
  { $id: 'Domain', description: 'A domain and its authoritative DNS zone.' },
);

const DnsRecord = Type.Object(
  {
    id: Id('rec'),
    domain_id: Id('dom'),
    name: Type.String({
      maxLength: 253,
      description: 'Relative to the zone; `@` is the apex. Unicode labels are stored as A-labels (`xn--`).',
    }),
    unicode_name: Type.String({
      maxLength: 253,
      description: '`name` with its A-labels decoded (`bücher` for `xn--bcher-kva`).',
    }),
    fqdn: Type.String({ maxLength: 255 }),
    type: RecordType,
    ttl: Type.Integer({ minimum: 60, maximum: 86400, format: 'int32' }),
    content: Type.String({
      maxLength: 65535,
      description: 'RDATA in zone-file presentation format; TXT unquoted. Host names in it are stored as A-labels.',
    }),
    unicode_content: Type.String({
      maxLength: 65535,
      description:
        '`content` with the A-labels of its host names decoded (CNAME, NS, MX, SRV targets); the same as `content` otherwise.',
    }),
    managed: Type.Boolean({ description: 'SOA and apex NS: maintained by the API, read-only.' }),
    ...ResourceMeta,
  },
  { $id: 'DnsRecord' },
);

const CreateBody = Type.Object(
  {
    account_id: Id('acc'),
    name: DomainName,
    mail_enabled: Type.Optional(Type.Boolean()),
    template: Type.Optional(
      StringEnum(['default', 'empty'] as const, { description: '`default`: web (and mail) records; `empty`: SOA and NS only.' }),
    ),
  },
  { additionalProperties: false },
);
const Mutable = {
  mail_enabled: Type.Boolean({
    description:
      'Adds or removes MX, SPF and mail address records, and the managed DKIM (`<selector>._domainkey`, a new RSA 2048 key) and DMARC (`_dmarc`) records.',
  }),
  status: Status,
  dmarc: Type.Object(
    {
      policy: Type.Optional(DmarcPolicy),
      rua: Type.Optional(
        Nullable(Type.String({ minLength: 3, maxLength: 254, description: 'An address for aggregate reports; null: none.' })),
      ),
    },
    { additionalProperties: false, description: 'Changes the `_dmarc` record (mail must be enabled, else 409).' },
  ),
  catch_all: Nullable(
    Type.String({
      minLength: 3,
      maxLength: 254,
      description:
        'Where mail to an address of the domain that does not exist goes: a mailbox or forwarder of this domain (422 otherwise); null: such mail is refused.',
    }),
  ),
};
export const DomainParams = Type.Object({ domain: DomainParam }, { additionalProperties: false });

export const domainOf = (req: FastifyRequest) => (req.params as { domain: string }).domain;

/** The `config.reach` of every route under `/v1/domains/{domain}`. */
export const domainReach = (svc: DomainsService) => async (req: FastifyRequest) => svc.load(callerOf(req), domainOf(req));

export function domainRoutes(app: App, svc: DomainsService): void {
  const tags = ['domains'];
  const reach = domainReach(svc);
  dkimRoutes(app, svc);

  listRoute(app, {
    path: '/v1/domains',
    tags,
    operationId: 'listDomains',
    summary: "List the caller's domains",
    scope: 'domains:read',
    querystring: Type.Object(
      {
        ...PageQuery,
        account_id: Type.Optional(Id('acc')),
        status: Type.Optional(Status),
        name: Type.Optional(DomainName),
        q: Type.Optional(Type.String({ maxLength: 253, description: 'Substring of the name, as A-label or Unicode.' })),
        updated_since: Type.Optional(Timestamp),
      },
      { additionalProperties: false },
    ),
    item: 'Domain',
    list: svc.list,
  });

  app.post(
    '/v1/domains',
    {
      config: { scope: 'domains:write' },
      schema: {
        tags,
        operationId: 'createDomain',
        summary: 'Add a domain and create its zone',
        description:
          "Creates the zone with SOA and NS records and, with the `default` template, `@`/`www` A/AAAA records at the provider's web addresses and MX/SPF records when mail is enabled. Names are unique across the service (409 `already_exists`). A name inside or above a domain of another account (`shop.example.com` when another account holds `example.com`, or the reverse) is a 409 `domain_unavailable` that does not name the other account; a sub-domain of the account's own domain is a zone of its own. `max_domains` applies (403).",
        body: CreateBody,
        response: { 201: Type.Ref('Domain') },
      },
    },
    async (req, reply) => sendCreated(reply, '/v1/domains', await svc.create(callerOf(req), req.body)),
  );

  app.get(
    '/v1/domains/:domain',
    {
      config: { scope: 'domains:read', reach },
      schema: {
        tags,
        operationId: 'getDomain',
        description: 'By id (`dom_...`) or by name (Unicode or A-label).',
        summary: 'Get a domain',
        params: DomainParams,
        response: { 200: Type.Ref('Domain') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.get(callerOf(req), req.params.domain)),
  );

  app.patch(
    '/v1/domains/:domain',
    {
      config: { scope: 'domains:write', reach },
      schema: {
        tags,
        operationId: 'updateDomain',
        summary: 'Update a domain (JSON Merge Patch)',
        description: 'Every change bumps the zone serial once. `status` is changed by operators and resellers.',
        params: DomainParams,
        headers: IfMatchHeaders,
        body: PatchBody(Mutable),
        response: { 200: Type.Ref('Domain') },
      },
    },
    async (req, reply) =>
      sendResource(req, reply, await svc.update(callerOf(req), req.params.domain, req.body, ifMatchVersion(req))),
  );

  app.delete(
    '/v1/domains/:domain',
    {
      config: { scope: 'domains:write', reach },
      schema: {
        tags,
        operationId: 'deleteDomain',
        summary: 'Delete a domain and its zone',
        description:
          'Refused with 409 `in_use` (listing them in `used_by`) while sites (by hostname or alias), mailboxes or forwarders use it, unless `cascade=true`, which deletes the mailboxes and forwarders with the domain and starts the deletion of the sites (and needs `emails:write` / `sites:write` for them).',
        params: DomainParams,
        headers: IfMatchHeaders,
        querystring: Type.Object({ cascade: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    async (req, reply) => {
      await svc.remove(callerOf(req), req.params.domain, { cascade: req.query.cascade ?? false }, ifMatchVersion(req));
      return reply.code(204).send(null);
    },
  );
}

const Key = {
  selector: Type.String({ maxLength: 20 }),
  public_key: Type.String({ maxLength: 1000, description: 'The SubjectPublicKeyInfo, base64.' }),
  dns_record: Type.Object({
    name: Type.String({ maxLength: 300 }),
    type: StringEnum(['TXT'] as const),
    content: Type.String({ maxLength: 1100 }),
  }),
  created_at: Timestamp,
};
const DomainDkim = Type.Object(
  {
    domain_id: Id('dom'),
    ...Key,
    previous: Nullable(
      Type.Object(
        { ...Key, retired_at: Timestamp, removed_after: Timestamp },
        { description: 'The key the last rotation retired, published until `removed_after` so mail it signed still verifies.' },
      ),
    ),
  },
  {
    $id: 'DomainDkim',
    description: "The domain's DKIM signing key (RSA 2048): its selector and the managed TXT record that publishes it.",
  },
);

function dkimRoutes(app: App, svc: DomainsService): void {
  const reach = domainReach(svc);
  const schema = { tags: ['domains'], params: DomainParams, response: { 200: Type.Ref('DomainDkim') } };
  app.get(
    '/v1/domains/:domain/dkim',
    {
      config: { scope: 'domains:read', reach },
      schema: {
        ...schema,
        operationId: 'getDomainDkim',
        summary: "Get the domain's DKIM key",
        description: 'Mail must be enabled on the domain (409 otherwise).',
      },
    },
    async (req) => svc.getDkim(callerOf(req), req.params.domain),
  );
  app.post(
    '/v1/domains/:domain/dkim/rotate',
    {
      config: { scope: 'domains:write', reach },
      schema: {
        ...schema,
        operationId: 'rotateDomainDkim',
        summary: "Rotate the domain's DKIM key",
        description:
          'A new key under a new selector signs from the next mail apply on; the old selector stays published for 7 days, then goes. One serial bump; emits `domain.dkim.rotated`. Mail must be enabled (409 otherwise).',
      },
    },
    async (req) => svc.rotateDkim(callerOf(req), req.params.domain),
  );
}

export const domainSchemas = [Domain, DnsRecord, DomainDkim];
