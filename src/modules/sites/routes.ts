import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { createRoute, described, listRoute, PATCH_DESCRIPTION } from '../../http/crud.js';
import { ifMatchVersion, sendResource } from '../../http/etag.js';
import { PatchBody, sendAccepted, type App } from '../../http/routes.js';
import { IfMatchHeaders } from '../../http/schemas.js';
import { CreateSite, SiteListQuery, SiteMutable, SiteParams } from './schemas.js';
import type { SitesService } from './service.js';

const siteOf = (req: FastifyRequest) => (req.params as { site_id: string }).site_id;

/** Sites: `/v1/sites` (their deployments and certificates have routes of their own). */
export function siteRoutes(app: App, svc: SitesService): void {
  const tags = ['sites'];
  const reach = async (req: FastifyRequest) => svc.load(callerOf(req), siteOf(req));
  const item = { config: { scope: 'sites:read' as const, reach } };
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
      '202 with the site `provisioning` and a `site.provision` operation; it turns `active` (or `failed` with a problem), then, with `tls.mode: auto`, a `site.certificate.issue` operation obtains its certificate. Every hostname and alias must be a domain of the account or a name under one, and serves one site only (409). `max_sites` applies (403).',
    scope: 'sites:write',
    body: CreateSite,
    response: 'SiteWithOperation',
    accepted: true,
    create: svc.create,
  });

  app.get(
    '/v1/sites/:site_id',
    {
      ...item,
      schema: {
        tags,
        operationId: 'getSite',
        description: 'The site with its runtime, TLS state, current deployment and `sync_state`.',
        summary: 'Get a site',
        params: SiteParams,
        response: { 200: Type.Ref('Site') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.get(callerOf(req), req.params.site_id)),
  );

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

  app.delete(
    '/v1/sites/:site_id',
    {
      ...write,
      schema: {
        tags,
        operationId: 'deleteSite',
        summary: 'Delete a site',
        description:
          '202 with the site `deleting` and a `site.delete` operation: the web server stops serving it, its files are removed, then GET is 404 and `site.deleted` is emitted. A repeated DELETE returns the same operation.',
        params: SiteParams,
        headers: IfMatchHeaders,
        response: { 202: Type.Ref('SiteWithOperation') },
      },
    },
    async (req, reply) => sendAccepted(reply, await svc.remove(callerOf(req), req.params.site_id, ifMatchVersion(req))),
  );

  app.post(
    '/v1/sites/:site_id/suspend',
    {
      ...write,
      schema: {
        tags,
        operationId: 'suspendSite',
        summary: 'Suspend a site',
        description: 'It answers 503 with a suspension page. Operators and resellers only.',
        params: SiteParams,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false }),
        response: { 200: Type.Ref('Site') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.suspend(callerOf(req), req.params.site_id, req.body.reason)),
  );
  app.post(
    '/v1/sites/:site_id/unsuspend',
    {
      ...write,
      schema: {
        tags,
        operationId: 'unsuspendSite',
        description: 'The site serves again once `sync_state` is `in_sync`. Announced as `site.active`.',
        summary: 'Unsuspend a site',
        params: SiteParams,
        response: { 200: Type.Ref('Site') },
      },
    },
    async (req, reply) => sendResource(req, reply, await svc.unsuspend(callerOf(req), req.params.site_id)),
  );
}
