import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../../http/auth.js';
import { ifMatchVersion } from '../../../http/etag.js';
import type { App } from '../../../http/routes.js';
import { IfMatchHeaders } from '../../../http/schemas.js';
import { SiteParams } from '../schemas.js';
import type { SitesService } from '../service.js';
import { CustomCertificate } from './schemas.js';
import type { CertificatesService } from './service.js';

export function certificateRoutes(app: App, sites: SitesService, svc: CertificatesService): void {
  const tags = ['sites'];
  const reach = async (req: FastifyRequest) => sites.load(callerOf(req), (req.params as { site_id: string }).site_id);

  app.get(
    '/v1/sites/:site_id/certificate',
    {
      config: { scope: 'certificates:read', reach },
      schema: {
        tags,
        operationId: 'getSiteCertificate',
        summary: "Get a site's certificate",
        description:
          'The certificate the site serves, with its chain (its private key never). 404 `not_found` while the site has none (mode `none`, or the first certificate not issued yet).',
        params: SiteParams,
        response: { 200: Type.Ref('Certificate') },
      },
    },
    async (req) => svc.get(callerOf(req), req.params.site_id),
  );

  app.put(
    '/v1/sites/:site_id/certificate',
    {
      config: { scope: 'certificates:write', reach },
      schema: {
        tags,
        operationId: 'putSiteCertificate',
        summary: 'Upload a custom certificate',
        description:
          "The site's `tls.mode` becomes `custom` and the web server serves this certificate. 422 with a pointer when the key does not match the certificate (`key_mismatch`), the certificate is expired or not yet valid, its names do not cover the hostname and every alias (`names_not_covered`, naming the missing ones), the chain does not lead to the leaf (`broken_chain`), or the key is not RSA ≥ 2048 or ECDSA P-256/P-384 (`unsupported_key`). 403 `feature_unavailable` when the plan lacks `ssl`. `If-Match` takes the site's ETag. The key is stored sealed and never returned.",
        params: SiteParams,
        headers: IfMatchHeaders,
        body: CustomCertificate,
        response: { 200: Type.Ref('Certificate') },
      },
    },
    async (req) => svc.putCustom(callerOf(req), req.params.site_id, req.body, ifMatchVersion(req)),
  );
}
