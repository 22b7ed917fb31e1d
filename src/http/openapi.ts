import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { decorate } from './openapi-conventions.js';
import { NoQuery } from './schemas.js';

const DESCRIPTION = `Berth is the automation API of a web-hosting provider.

Conventions (the choices where the product specification is silent are written down here):
- JSON in and out, snake_case fields, RFC 3339 UTC timestamps, TypeID identifiers (opaque).
- Authentication: \`Authorization: Bearer berth_...\`. Each operation lists the scope it needs
  in its security requirement; \`<area>:write\` implies \`<area>:read\`, \`*\` grants all.
- A resource outside the token's reach answers 404, exactly as if it did not exist; a missing
  scope on a reachable resource answers 403 \`insufficient_scope\`.
- Lists: \`{data, next_cursor}\`, newest first, \`limit\` 1-200 (default 50), RFC 8288 \`Link\`
  header for the next page. Unknown query parameters are a 400, unknown body fields a 422.
- \`GET\` of one resource returns an \`ETag\` derived from its \`version\`; \`If-None-Match\` gives 304,
  \`If-Match\` on PUT/PATCH/DELETE gives 412 when stale. The ETag covers the stored resource; live
  measurements such as an account's \`usage\` are not part of it.
- PATCH takes a JSON Merge Patch (RFC 7396) as \`application/merge-patch+json\` or \`application/json\`.
- Every POST accepts \`Idempotency-Key\`; the first response below 500 is replayed for 24 hours
  with \`Idempotent-Replayed: true\`. A replay repeats a one-time secret (a generated password, a
  token) to the holder of the key; the stored copy is sealed under the key and useless without it.
- Provisioned resources (zones, mailboxes, forwarders) carry \`sync_state\`
  (\`pending | in_sync | error\`) and \`sync_error\`: whether the real server has the change yet.
- Errors are RFC 9457 problem documents with a stable \`code\`; \`type\` links to a page that
  documents the code.
- Rate limits: token buckets per token (per address when unauthenticated), announced in the IETF
  \`RateLimit-Policy\` and \`RateLimit\` headers; 429 carries \`Retry-After\`.`;

export interface OpenApiOptions {
  /** The requests Berth sends, by event type (the OpenAPI 3.1 `webhooks` section). */
  webhooks?: Record<string, unknown>;
  /** `servers[0]`: where clients reach this server. */
  serverUrl: string;
  /** `serverUrl` is the local listener, not a configured public address. */
  local: boolean;
}

export async function installOpenApi(app: FastifyInstance, extra: OpenApiOptions): Promise<void> {
  app.addHook('onRoute', (route) => {
    if (!(route.url.startsWith('/v1') || route.url === '/')) return;
    const schema = (route.schema ??= {});
    schema.querystring ??= NoQuery;
    const scope = route.config?.scope;
    if (route.config?.auth === false) (schema as { security?: unknown }).security = [];
    else (schema as { security?: unknown }).security = [{ bearerAuth: scope ? [scope] : [] }];
    if (!route.url.startsWith('/v1')) return;
    if (scope) (schema as Record<string, unknown>)['x-required-scope'] = scope;
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Berth API',
        version: '1.0.0',
        description: DESCRIPTION,
        contact: { name: 'Berth', url: 'https://berth.example.com' },
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      tags: [
        { name: 'meta', description: 'Versions, health and documentation.' },
        { name: 'me', description: 'The calling token.' },
        { name: 'tokens', description: 'API tokens.' },
        { name: 'resellers', description: 'Resellers (operator only).' },
        {
          name: 'servers',
          description: 'Hosting servers (operator only): where accounts are placed, and the agents that apply their units.',
        },
        {
          name: 'moves',
          description:
            "Moves (operator only): an account's roles carried to other servers, step by step, with one server in charge at every moment.",
        },
        { name: 'plans', description: 'Hosting plans and their limits.' },
        { name: 'accounts', description: 'Hosting accounts.' },
        { name: 'operations', description: 'Asynchronous operations.' },
        { name: 'events', description: 'The event feed.' },
        { name: 'domains', description: 'Domains and their zones.' },
        { name: 'dns', description: 'DNS records.' },
        {
          name: 'emails',
          description:
            "Mailboxes: IMAP logins with `{ARGON2ID}` password hashes, Maildirs, quotas, forwarding copies and autoresponders. Changes reach the mail server through the domain's mail apply unit (`sync_state`).",
        },
        { name: 'email-forwarders', description: 'Addresses without a mailbox, forwarded elsewhere.' },
        { name: 'sites', description: 'Web sites: hostnames, runtimes (static or PHP), deployments and HTTPS certificates.' },
        { name: 'databases', description: 'MariaDB databases of an account, and the privileges its users hold on them.' },
        { name: 'database-users', description: 'MariaDB logins of an account (`<username>_<suffix>`).' },
        {
          name: 'cron',
          description:
            "Cron jobs of an account: commands its web server runs on a schedule as the account's Unix user, and their runs.",
        },
        {
          name: 'ssh',
          description:
            'SSH and SFTP access of an account: its Unix user on its web server, reached with the public keys managed here (never a password).',
        },
        { name: 'backups', description: 'Archives of an account (sites, mailboxes, zones) on backup storage.' },
        {
          name: 'webhooks',
          description:
            'Endpoints that receive events, signed per Standard Webhooks, retried, with a delivery log. The `webhooks` section of this document describes the requests.',
        },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'berth_<40 base62>', description: 'A Berth API token.' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String((json as { $id?: string }).$id ?? `def-${i}`) },
    transformObject: (documentObject) => {
      const doc = (documentObject as { openapiObject: Record<string, unknown> }).openapiObject;
      decorate(doc, { serverUrl: extra.serverUrl, local: extra.local });
      if (extra.webhooks) doc.webhooks = extra.webhooks;
      return doc;
    },
    hideUntagged: true,
  });

  app.get(
    '/v1/openapi.json',
    {
      config: { auth: false },
      schema: { tags: ['meta'], operationId: 'getOpenApi', summary: 'The OpenAPI 3.1 document', hide: true },
    },
    async () => app.swagger(),
  );
}
