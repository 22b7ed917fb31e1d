import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../../http/auth.js';
import { itemRoute, listRoute } from '../../../http/crud.js';
import { sendAccepted, type App } from '../../../http/routes.js';
import { PageOnlyQuery } from '../../../http/schemas.js';
import { unsupportedMediaType } from '../../../lib/errors.js';
import { SiteParams } from '../schemas.js';
import type { SitesService } from '../service.js';
import { ARCHIVE_TYPES, DeploymentParams } from './schemas.js';
import type { DeploymentsService } from './service.js';

/** A site's deployments: `/v1/sites/{site_id}/deployments`. */
export function deploymentRoutes(app: App, sites: SitesService, deployments: DeploymentsService): void {
  const tags = ['sites'];
  const reach = async (req: FastifyRequest) => sites.load(callerOf(req), (req.params as { site_id: string }).site_id);
  const write = { config: { scope: 'sites:write' as const, reach } };

  listRoute(app, {
    path: '/v1/sites/:site_id/deployments',
    tags,
    operationId: 'listDeployments',
    summary: "List a site's deployments",
    description:
      "The site's deployments, newest first; the live one is the site's `current_deployment_id`. `next_cursor` (also in the `Link` header) leads to the next page.",
    scope: 'sites:read',
    params: SiteParams,
    reach,
    querystring: PageOnlyQuery,
    item: 'Deployment',
    list: (caller, _query, page, req) => deployments.list(caller, (req.params as { site_id: string }).site_id, page),
  });

  itemRoute(app, {
    method: 'GET',
    path: '/v1/sites/:site_id/deployments/:deployment_id',
    tags,
    operationId: 'getDeployment',
    summary: 'Get a deployment',
    description: 'Its `status` (`pending`, `live`, `superseded`, `pruned`, `failed`), sizes and, when it failed, why.',
    scope: 'sites:read',
    reach,
    params: DeploymentParams,
    response: 'Deployment',
    run: (caller, p) => deployments.get(caller, p.site_id, p.deployment_id),
  });

  itemRoute(app, {
    method: 'POST',
    path: '/v1/sites/:site_id/deployments/:deployment_id/activate',
    tags,
    operationId: 'activateDeployment',
    summary: 'Roll back (or forward) to a kept release',
    description:
      'Makes a kept release live again (a rollback, or forward again): 202 with a `site.deploy` operation that switches it.',
    scope: 'sites:write',
    reach,
    params: DeploymentParams,
    response: 'DeploymentWithOperation',
    accepted: true,
    run: (caller, p) => deployments.activate(caller, p.site_id, p.deployment_id),
  });

  // The archive route parses its own body: the raw request stream goes to disk, never into memory.
  app.register(async (scope: App) => {
    for (const type of Object.keys(ARCHIVE_TYPES)) scope.addContentTypeParser(type, (_req, payload, done) => done(null, payload));
    scope.post(
      '/v1/sites/:site_id/deployments',
      {
        ...write,
        schema: {
          tags,
          operationId: 'createDeployment',
          summary: 'Deploy an archive',
          description:
            "The body is a tar.gz (`application/gzip`) or zip (`application/zip`) archive, streamed to disk and unpacked into a new release while it is received. Paths leading outside the release, absolute paths, links pointing outside and device files are a 422 with nothing kept, and so is a member the archive itself makes impossible to write (a file where a directory goes, a hard link to nothing: `invalid_archive` naming it); a member given twice replaces the earlier one, as with `tar -x`; an archive that inflates more than 200:1 once past 8 MiB is a decompression bomb (422 `compression_ratio`, refused as soon as it shows); more than `BERTH_DEPLOY_MAX_MB` is a 413; more than the account's remaining disk a 403 `quota_exceeded`. 202 with the deployment `pending` (`archive_bytes` received, `size_bytes` unpacked) and a `site.deploy` operation that switches it live atomically: the bytes are all received and unpacked before the 202, so that operation has no byte work to report and goes from 10 to 100 % in one step (a client shows upload progress itself, as `berth deploy` does). The newest 5 releases are kept for rollback.",
          params: SiteParams,
          consumes: Object.keys(ARCHIVE_TYPES),
          body: Type.String({ format: 'binary', maxLength: 2 ** 31 }),
          response: { 202: Type.Ref('DeploymentWithOperation') },
        },
      },
      async (req, reply) => {
        const format = ARCHIVE_TYPES[(req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''];
        if (!format) throw unsupportedMediaType(req.headers['content-type'], Object.keys(ARCHIVE_TYPES));
        const length = req.headers['content-length'] ? Number(req.headers['content-length']) : null;
        return sendAccepted(
          reply,
          await deployments.deploy(callerOf(req), req.params.site_id, req.body as unknown as Readable, format, length),
        );
      },
    );
  });
}
