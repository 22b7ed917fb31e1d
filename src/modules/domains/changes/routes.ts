import { createRoute, itemRoute, listRoute } from '../../../http/crud.js';
import type { App } from '../../../http/routes.js';
import { DryRunQuery } from '../records/schemas.js';
import { domainOf, domainReach } from '../routes.js';
import { DomainParams } from '../schemas.js';
import type { DomainsService } from '../service.js';
import { ChangeListQuery, ChangeParams, CreateDnsChange, DryRunResult, type DnsChange } from './schemas.js';
import type { ChangesService } from './service.js';

export function dnsChangeRoutes(app: App, domains: DomainsService, svc: ChangesService): void {
  const tags = ['dns'];
  const reach = domainReach(domains);

  createRoute(app, {
    path: '/v1/domains/:domain/changes',
    tags,
    operationId: 'createDnsChange',
    summary: 'Apply or schedule an atomic change set',
    description:
      'All or nothing; field errors point into the set (`/create/1/content`). Without `apply_at` (or with one in the past) it is applied now: 201 `applied`. With `apply_at` in the future it is validated now, `scheduled`, and applied then by whichever process runs the job — validated again at that time, `failed` with the problem if it no longer fits. `dry_run=true` validates only (200).',
    scope: 'dns:write',
    params: DomainParams,
    reach,
    querystring: DryRunQuery,
    body: CreateDnsChange,
    response: 'DnsChange',
    dryRun: DryRunResult,
    create: (caller, body, req) => svc.create(caller, domainOf(req), body, (req.query as { dry_run?: boolean }).dry_run ?? false),
    location: (change: DnsChange) => `/v1/domains/${change.domain_id}/changes`,
  });

  listRoute(app, {
    path: '/v1/domains/:domain/changes',
    tags,
    operationId: 'listDnsChanges',
    summary: "A zone's change sets",
    scope: 'dns:read',
    reach,
    params: DomainParams,
    querystring: ChangeListQuery,
    item: 'DnsChange',
    list: (caller, query, page, req) => svc.list(caller, domainOf(req), query.status, page),
  });

  itemRoute(app, {
    method: 'GET',
    path: '/v1/domains/:domain/changes/:change_id',
    tags,
    operationId: 'getDnsChange',
    summary: 'Get a change set',
    description: 'A scheduled or applied change set: its records, `apply_at` and `status`.',
    scope: 'dns:read',
    reach,
    params: ChangeParams,
    response: 'DnsChange',
    run: (caller, p) => svc.get(caller, p.domain, p.change_id),
  });

  itemRoute(app, {
    method: 'DELETE',
    path: '/v1/domains/:domain/changes/:change_id',
    tags,
    operationId: 'cancelDnsChange',
    summary: 'Cancel a scheduled change set',
    description: 'Cancels a change set still `scheduled`: 200 with it, now `canceled`; 409 `invalid_state` once it has run.',
    scope: 'dns:write',
    reach,
    params: ChangeParams,
    response: 'DnsChange',
    run: (caller, p) => svc.cancel(caller, p.domain, p.change_id),
  });
}
