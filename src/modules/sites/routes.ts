import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { createRoute, described, itemRoute, listRoute, PATCH_DESCRIPTION } from '../../http/crud.js';
import { ifMatchVersion, sendResource } from '../../http/etag.js';
import { PatchBody, type App } from '../../http/routes.js';
import { IfMatchHeaders, SuspendBody } from '../../http/schemas.js';
import { CreateSite, SiteListQuery, SiteMutable, SiteParams } from './schemas.js';
import type { SitesService } from './service.js';

const siteOf = (req: FastifyRequest) => (req.params as { site_id: string }).site_id;

/** Sites: `/v1/sites` (their deployments and certificates have routes of their own). */
export function siteRoutes(app: App, svc: SitesService): void {
  const tags = ['sites'];
  const reach = async (req: FastifyRequest) => svc.load(callerOf(req), siteOf(req));
  const write = { config: { scope: 'sites:write' as const, reach } };

  listRoute(app, {
    path: '/v1/sites',
    tags,
    operationId: 'listSites',
    summary: "List the caller's sites",
    scope: 'sites:read',
    querystring: SiteListQuery,
    item: 'Site',
    list: svc.list,
  });

  createRoute(app, {
    path: '/v1/sites',
    tags,
    operationId: 'createSite',
    summary: 'Create a site',
    description:
      'Makes a site for a hostname of the account: 202 with the site `provisioning` and a `site.provision` operation; it turns `active` (or `failed` with a problem), then, with `tls.mode: auto`, a `site.certificate.issue` operation obtains its certificate. Every hostname and alias must be a domain of the account or a name under one, and serves one site only (409). `max_sites` applies (403).',
    scope: 'sites:write',
    body: CreateSite,
    response: 'SiteWithOperation',
    accepted: true,
    create: svc.create,
  });

  itemRoute(app, {
    method: 'GET',
    path: '/v1/sites/:site_id',
    tags,
    operationId: 'getSite',
    summary: 'Get a site',
    description: 'The site with its runtime, TLS state, current deployment and `sync_state`.',
    scope: 'sites:read',
    reach,
    params: SiteParams,
    response: 'Site',
    run: (caller, { site_id }) => svc.get(caller, site_id),
  });

  const HOSTNAME_FIXED = 'The hostname is fixed at creation.';
  const update = {
    tags,
    params: SiteParams,
    headers: IfMatchHeaders,
    response: { 200: Type.Ref('Site') },
  };
  app.put(
    '/v1/sites/:site_id',
    {
      ...write,
      schema: {
        ...update,
        operationId: 'replaceSite',
        summary: 'Replace a site',
        description: described(
          HOSTNAME_FIXED,
          '`aliases` and `runtime` are required; `php` and `tls` are optional and, when given, change only the settings they hold.',
        ),
        body: Type.Object(SiteMutable, { additionalProperties: false }),
      },
    },
    async (req, reply) =>
      sendResource(req, reply, await svc.update(callerOf(req), req.params.site_id, req.body, ifMatchVersion(req))),
  );
  app.patch(
    '/v1/sites/:site_id',
    {
      ...write,
      schema: {
        ...update,
        operationId: 'updateSite',
        summary: 'Update a site (JSON Merge Patch)',
        description: described(HOSTNAME_FIXED, PATCH_DESCRIPTION),
        body: PatchBody(SiteMutable),
      },
    },
    async (req, reply) =>
      sendResource(req, reply, await svc.update(callerOf(req), req.params.site_id, req.body, ifMatchVersion(req))),
  );

  itemRoute(app, {
    method: 'DELETE',
    path: '/v1/sites/:site_id',
    tags,
    operationId: 'deleteSite',
    summary: 'Delete a site',
    description:
      'Stops serving the site and removes its files: 202 with the site `deleting` and a `site.delete` operation; the web server stops serving it, its files are removed, then GET is 404 and `site.deleted` is emitted. A repeated DELETE returns the same operation.',
    scope: 'sites:write',
    reach,
    params: SiteParams,
    headers: IfMatchHeaders,
    response: 'SiteWithOperation',
    accepted: true,
    run: (caller, { site_id }, _body, req) => svc.remove(caller, site_id, ifMatchVersion(req)),
  });

  itemRoute(app, {
    method: 'POST',
    path: '/v1/sites/:site_id/suspend',
    tags,
    operationId: 'suspendSite',
    summary: 'Suspend a site',
    description: 'It answers 503 with a suspension page. Operators and resellers only.',
    scope: 'sites:write',
    reach,
    params: SiteParams,
    body: SuspendBody,
    response: 'Site',
    run: (caller, { site_id }, { reason }) => svc.suspend(caller, site_id, reason),
  });

  itemRoute(app, {
    method: 'POST',
    path: '/v1/sites/:site_id/unsuspend',
    tags,
    operationId: 'unsuspendSite',
    summary: 'Unsuspend a site',
    description: 'The site serves again once `sync_state` is `in_sync`. Announced as `site.active`.',
    scope: 'sites:write',
    reach,
    params: SiteParams,
    response: 'Site',
    run: (caller, { site_id }) => svc.unsuspend(caller, site_id),
  });
}
