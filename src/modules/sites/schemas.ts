import { Type, type Static } from 'typebox';
import { Failure, Id, Nullable, PageQuery, ResourceMeta, StringEnum, SyncFields, Timestamp } from '../../http/schemas.js';
import { PHP_SETTINGS_FIELDS } from '../../provisioning/render/php-fpm.js';

/** Sites as the API shows and takes them: each shape declared once (validator, type, document). */

const SiteStatus = StringEnum(['provisioning', 'active', 'suspended', 'failed', 'deleting'] as const);
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
const phpFields = PHP_SETTINGS_FIELDS;
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
      'HTTPS settings. Default mode: `auto` when the plan includes `ssl`, else `none`; turning `auto` or `custom` on without `ssl` (or retrying a failed `auto`) is a 403 `feature_unavailable`; a site that has HTTPS from before its plan lost `ssl` keeps it through other changes. `custom` is set by uploading a certificate. Asking for `auto` again after a failure retries at once.',
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
  { description: "The site's HTTPS. Events: `site.certificate.issued|renewed|failed|renewal_failed|expiring`." },
);

export const Site = Type.Object(
  {
    id: Id('site'),
    account_id: Id('acc'),
    hostname: Type.String({ maxLength: 253 }),
    aliases: Type.Array(Type.String({ maxLength: 253 }), { maxItems: 20 }),
    runtime: Runtime,
    php: Php,
    status: SiteStatus,
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
    ...SyncFields(
      'Whether the web server serves the current state; `error` with `sync_error` while applies fail (they are retried).',
    ),
    ...ResourceMeta,
  },
  {
    $id: 'Site',
    description:
      'A website. States: provisioning → active ⇄ suspended; provisioning → failed; any → deleting → gone. A suspended site, or any site of a suspended account, answers 503 with a suspension page.',
  },
);
const SiteWithOperation = Type.Object({ ...Site.properties, operation: Type.Ref('Operation') }, { $id: 'SiteWithOperation' });

export const SiteParams = Type.Object({ site_id: Id('site') }, { additionalProperties: false });
export const SiteMutable = { aliases: Aliases, runtime: Runtime, php: Type.Optional(PhpInput), tls: Type.Optional(TlsInput) };

export type Site = Static<typeof Site>;
export type TlsSettings = Pick<Site['tls'], 'mode' | 'redirect_http' | 'hsts'>;

export const SiteListQuery = Type.Object(
  {
    ...PageQuery,
    account_id: Type.Optional(Id('acc')),
    status: Type.Optional(SiteStatus),
    q: Type.Optional(Type.String({ maxLength: 253, description: 'Substring of a hostname or alias.' })),
  },
  { additionalProperties: false },
);
export type SiteListQuery = Static<typeof SiteListQuery>;

export const CreateSite = Type.Object(
  {
    account_id: Id('acc'),
    hostname: Hostname,
    aliases: Type.Optional(Aliases),
    runtime: Type.Optional(Runtime),
    php: Type.Optional(PhpInput),
    tls: Type.Optional(TlsInput),
  },
  { additionalProperties: false },
);
export type CreateSite = Static<typeof CreateSite>;
/** A PUT or PATCH of a site as the service takes it. */
export type SitePatch = Partial<Static<ReturnType<typeof Type.Object<typeof SiteMutable>>>>;

/** `GET /v1/runtimes`: what a site's `runtime` may be. */
const RuntimeSchema = Type.Object({
  name: Type.String({ maxLength: 20, description: "What a site's `runtime` takes: `static` or `php-<major>.<minor>`." }),
  kind: StringEnum(['static', 'php'] as const),
  version: Nullable(Type.String({ maxLength: 10, description: 'The PHP version (`8.2`); null for `static`.' })),
});
const Runtimes = Type.Object(
  {
    data: Type.Array(RuntimeSchema, { maxItems: 50 }),
    default_php: Nullable(Type.String({ maxLength: 20, description: 'The newest PHP installed; null without PHP.' })),
  },
  { $id: 'Runtimes', description: 'The runtimes installed on the web host.' },
);

export const siteSchemas = [Site, SiteWithOperation, Runtimes];
