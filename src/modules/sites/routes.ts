import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { unsupportedMediaType } from '../../http/errors.js';
import { described, listRoute, PATCH_DESCRIPTION } from '../../http/crud.js';
import { ifMatchVersion, sendResource } from '../../http/etag.js';
import { pageParams, sendPage } from '../../http/pagination.js';
import { PatchBody, sendAccepted, type App } from '../../http/routes.js';
import { Id, IfMatchHeaders, Nullable, PageQuery, ResourceMeta, StringEnum, Timestamp, Failure } from '../../http/schemas.js';
import type { DeploymentsService } from './deployments/service.js';
import type { SitesService } from './service.js';

const Status = StringEnum(['provisioning', 'active', 'suspended', 'failed', 'deleting'] as const);
const Hostname = Type.String({
  minLength: 1,
  maxLength: 253,
  description: 'A domain of the account or a name under one (A-label or Unicode).',
});
const Aliases = Type.Array(Hostname, {
  maxItems: 20,
  description:
    'More hostnames the site answers to. A wildcard (`*.example.com`) answers every name one label below; its certificate is obtained by DNS-01, so its zone must be hosted by Berth in the same account.',
});
const Runtime = Type.String({
  pattern: '^(static|php-[0-9]+\\.[0-9]+)$',
  maxLength: 20,
  description:
    '`static` serves files; `php-<major>.<minor>` runs `*.php` with that PHP version (one of `GET /v1/runtimes`; the plan needs `php`), with `index.php` as index and as the fallback of paths that are no file (a front controller).',
});
const phpFields = {
  memory_limit_mb: Type.Integer({ minimum: 16, maximum: 2048, format: 'int32', description: '`memory_limit`. Default 128.' }),
  upload_max_filesize_mb: Type.Integer({
    minimum: 1,
    maximum: 1024,
    format: 'int32',
    description: "`upload_max_filesize` and `post_max_size`, and the web server's largest request body. Default 64.",
  }),
  max_execution_time_s: Type.Integer({
    minimum: 1,
    maximum: 600,
    format: 'int32',
    description: '`max_execution_time`. Default 30.',
  }),
  display_errors: Type.Boolean({ description: '`display_errors`. Default false.' }),
};
const Php = Type.Object(phpFields, { description: "The site's PHP settings (used when its runtime is PHP)." });
const PhpInput = Type.Object(
  Object.fromEntries(Object.entries(phpFields).map(([k, v]) => [k, Type.Optional(v)])) as {
    [K in keyof typeof phpFields]: ReturnType<typeof Type.Optional<(typeof phpFields)[K]>>;
  },
  { additionalProperties: false, description: "The site's PHP settings; what is left out keeps its value (or default)." },
);

const TlsMode = StringEnum(['auto', 'custom', 'none'] as const, {
  description:
    '`auto`: Berth obtains and renews a certificate for the hostname and every alias (ACME, or the internal CA when no ACME directory is configured); `custom`: the one uploaded with PUT .../certificate; `none`: plain HTTP only.',
});
const TlsInput = Type.Object(
  {
    mode: Type.Optional(TlsMode),
    redirect_http: Type.Optional(Type.Boolean({ description: 'Answer plain HTTP with 308 to https:// (ACME proofs excepted).' })),
    hsts: Type.Optional(Type.Boolean({ description: 'Send `Strict-Transport-Security: max-age=31536000` over HTTPS.' })),
  },
  {
    additionalProperties: false,
    description:
      'HTTPS settings. Default mode: `auto` when the plan includes `ssl`, else `none`; `auto` or `custom` without `ssl` is a 403 `feature_unavailable`. `custom` is set by uploading a certificate. Asking for `auto` again after a failure retries at once.',
  },
);
const Tls = Type.Object(
  {
    mode: TlsMode,
    status: StringEnum(['none', 'pending', 'active', 'failed', 'expired'] as const, {
      description:
        '`pending` while the first certificate (or one for changed names) is obtained; `active` while one is served (also during a renewal, and after a failed renewal while the old one is valid); `failed` when obtaining one failed and none covers the site (`error` says why; retried with backoff); `expired` when the served one has run out.',
    }),
    issuer: Nullable(StringEnum(['acme', 'internal', 'custom'] as const)),
    names: Type.Array(Type.String({ maxLength: 253 }), {
      maxItems: 100,
      description: 'The names the served certificate covers.',
    }),
    not_before: Nullable(Timestamp),
    expires_at: Nullable(Timestamp),
    renew_after: Nullable(
      Type.String({
        format: 'date-time',
        maxLength: 40,
        description:
          'When renewal starts (`auto`): two thirds into the lifetime, or earlier when the ACME server suggests it (ARI).',
      }),
    ),
    redirect_http: Type.Boolean(),
    hsts: Type.Boolean(),
    error: Nullable(Failure),
  },
  { description: "The site's HTTPS (SPEC §9). Events: `site.certificate.issued|renewed|failed|renewal_failed|expiring`." },
);

const Site = Type.Object(
  {
    id: Id('site'),
    account_id: Id('acc'),
    hostname: Type.String({ maxLength: 253 }),
    aliases: Type.Array(Type.String({ maxLength: 253 }), { maxItems: 20 }),
    runtime: Runtime,
    php: Php,
    status: Status,
    suspension: Nullable(Type.Object({ reason: Type.String({ maxLength: 500 }) })),
    current_deployment_id: Nullable(Id('dpl')),
    url: Type.String({ maxLength: 300 }),
    disk_bytes: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      format: 'int64',
      description: 'Bytes of the kept releases.',
    }),
    tls: Tls,
    error: Nullable(Failure),
    sync_state: StringEnum(['pending', 'in_sync', 'error'] as const, {
      description:
        'Whether the web server serves the current state; `error` with `sync_error` while applies fail (they are retried).',
    }),
    sync_error: Nullable(Type.String({ maxLength: 1000 })),
    ...ResourceMeta,
  },
  {
    $id: 'Site',
    description:
      'A website. States: provisioning → active ⇄ suspended; provisioning → failed; any → deleting → gone. A suspended site, or any site of a suspended account, answers 503 with a suspension page.',
  },
);
const SiteWithOperation = Type.Object({ ...Site.properties, operation: Type.Ref('Operation') }, { $id: 'SiteWithOperation' });

const Deployment = Type.Object(
  {
    id: Id('dpl'),
    site_id: Id('site'),
    status: StringEnum(['pending', 'live', 'failed', 'superseded', 'pruned'] as const, {
      description:
        '`pending → live | failed`; the live release becomes `superseded` when another goes live (kept for rollback) and `pruned` once only the newest 5 releases are kept.',
    }),
    format: StringEnum(['tar.gz', 'zip'] as const),
    archive_bytes: Nullable(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        format: 'int64',
        description: 'The size of the uploaded archive (null for deployments made before it was recorded).',
      }),
    ),
    size_bytes: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      format: 'int64',
      description: "Unpacked: the bytes of the release's files on disk (what counts against the disk quota).",
    }),
    file_count: Type.Integer({ minimum: 0, maximum: 2_000_000_000, format: 'int32', description: 'Files in the release.' }),
    error: Nullable(Failure),
    live_at: Nullable(Timestamp),
    ...ResourceMeta,
  },
  { $id: 'Deployment', description: 'An uploaded release of a site.' },
);
const DeploymentWithOperation = Type.Object(
  { ...Deployment.properties, operation: Type.Ref('Operation') },
  { $id: 'DeploymentWithOperation' },
);

const SiteParams = Type.Object({ site_id: Id('site') }, { additionalProperties: false });
const DeploymentParams = Type.Object({ site_id: Id('site'), deployment_id: Id('dpl') }, { additionalProperties: false });
const Mutable = { aliases: Aliases, runtime: Runtime, php: Type.Optional(PhpInput), tls: Type.Optional(TlsInput) };

const ARCHIVE_TYPES: Record<string, 'tar.gz' | 'zip'> = {
  'application/gzip': 'tar.gz',
  'application/x-gzip': 'tar.gz',
  'application/zip': 'zip',
};

const siteOf = (req: FastifyRequest) => (req.params as { site_id: string }).site_id;

export function siteRoutes(app: App, svc: SitesService, deployments: DeploymentsService): void {
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
    querystring: Type.Object(
      {
        ...PageQuery,
        account_id: Type.Optional(Id('acc')),
        status: Type.Optional(Status),
        q: Type.Optional(Type.String({ maxLength: 253, description: 'Substring of a hostname or alias.' })),
      },
      { additionalProperties: false },
    ),
    item: 'Site',
    list: svc.list,
  });

  app.post(
    '/v1/sites',
    {
      config: { scope: 'sites:write' },
      schema: {
        tags,
        operationId: 'createSite',
        summary: 'Create a site',
        description:
          '202 with the site `provisioning` and a `site.provision` operation; it turns `active` (or `failed` with a problem), then, with `tls.mode: auto`, a `site.certificate.issue` operation obtains its certificate. Every hostname and alias must be a domain of the account or a name under one, and serves one site only (409). `max_sites` applies (403).',
        body: Type.Object(
          {
            account_id: Id('acc'),
            hostname: Hostname,
            aliases: Type.Optional(Aliases),
            runtime: Type.Optional(Runtime),
            php: Type.Optional(PhpInput),
            tls: Type.Optional(TlsInput),
          },
          { additionalProperties: false },
        ),
        response: { 202: Type.Ref('SiteWithOperation') },
      },
    },
    async (req, reply) => sendAccepted(reply, await svc.create(callerOf(req), req.body)),
  );

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
        body: Type.Object(Mutable, { additionalProperties: false }),
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
        body: PatchBody(Mutable),
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

  app.get(
    '/v1/sites/:site_id/deployments',
    {
      ...item,
      schema: {
        tags,
        operationId: 'listDeployments',
        description:
          "The site's deployments, newest first; the live one is the site's `current_deployment_id`. `next_cursor` (also in the `Link` header) leads to the next page.",
        summary: "List a site's deployments",
        params: SiteParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: {
          200: Type.Object({
            data: Type.Array(Type.Ref('Deployment'), { maxItems: 200 }),
            next_cursor: Nullable(Type.String({ maxLength: 500 })),
          }),
        },
      },
    },
    async (req, reply) => {
      const page = pageParams(req.query);
      return sendPage(req, reply, await deployments.list(callerOf(req), req.params.site_id, page), page);
    },
  );

  app.get(
    '/v1/sites/:site_id/deployments/:deployment_id',
    {
      ...item,
      schema: {
        tags,
        operationId: 'getDeployment',
        description: 'Its `status` (`pending`, `live`, `superseded`, `pruned`, `failed`), sizes and, when it failed, why.',
        summary: 'Get a deployment',
        params: DeploymentParams,
        response: { 200: Type.Ref('Deployment') },
      },
    },
    async (req, reply) =>
      sendResource(req, reply, await deployments.get(callerOf(req), req.params.site_id, req.params.deployment_id)),
  );

  app.post(
    '/v1/sites/:site_id/deployments/:deployment_id/activate',
    {
      ...write,
      schema: {
        tags,
        operationId: 'activateDeployment',
        summary: 'Roll back (or forward) to a kept release',
        description: '202 with a `site.deploy` operation that switches the release live.',
        params: DeploymentParams,
        response: { 202: Type.Ref('DeploymentWithOperation') },
      },
    },
    async (req, reply) =>
      sendAccepted(reply, await deployments.activate(callerOf(req), req.params.site_id, req.params.deployment_id)),
  );

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

export const siteSchemas = [Site, SiteWithOperation, Deployment, DeploymentWithOperation];
