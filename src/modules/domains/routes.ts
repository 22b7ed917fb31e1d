import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { createRoute, itemRoute, listRoute } from '../../http/crud.js';
import { ifMatchVersion } from '../../http/etag.js';
import { PatchBody, type App } from '../../http/routes.js';
import { IfMatchHeaders } from '../../http/schemas.js';
import { CreateDomain, DeleteDomainQuery, DomainListQuery, DomainMutable, DomainParams } from './schemas.js';
import type { DomainsService } from './service.js';

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
    querystring: DomainListQuery,
    item: 'Domain',
    list: svc.list,
  });

  createRoute(app, {
    path: '/v1/domains',
    tags,
    operationId: 'createDomain',
    summary: 'Add a domain and create its zone',
    description:
      "Creates the zone with SOA and NS records and, with the `default` template, `@`/`www` A/AAAA records at the provider's web addresses and MX/SPF records when mail is enabled. Names are unique across the service (409 `already_exists`). A name inside or above a domain of another account (`shop.example.com` when another account holds `example.com`, or the reverse) is a 409 `domain_unavailable` that does not name the other account; a sub-domain of the account's own domain is a zone of its own. `max_domains` applies (403).",
    scope: 'domains:write',
    body: CreateDomain,
    response: 'Domain',
    create: svc.create,
  });

  itemRoute(app, {
    method: 'GET',
    path: '/v1/domains/:domain',
    tags,
    operationId: 'getDomain',
    summary: 'Get a domain',
    description: 'By id (`dom_...`) or by name (Unicode or A-label).',
    scope: 'domains:read',
    reach,
    params: DomainParams,
    response: 'Domain',
    run: (caller, { domain }) => svc.get(caller, domain),
  });

  itemRoute(app, {
    method: 'PATCH',
    path: '/v1/domains/:domain',
    tags,
    operationId: 'updateDomain',
    summary: 'Update a domain (JSON Merge Patch)',
    description: 'Every change bumps the zone serial once. `status` is changed by operators and resellers.',
    scope: 'domains:write',
    reach,
    params: DomainParams,
    headers: IfMatchHeaders,
    body: PatchBody(DomainMutable),
    response: 'Domain',
    run: (caller, { domain }, patch, req) => svc.update(caller, domain, patch, ifMatchVersion(req)),
  });

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
        querystring: DeleteDomainQuery,
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    async (req, reply) => {
      await svc.remove(callerOf(req), req.params.domain, { cascade: req.query.cascade ?? false }, ifMatchVersion(req));
      return reply.code(204).send(null);
    },
  );
}

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
