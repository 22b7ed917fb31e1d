import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';

export const SUPPORTED_VERSIONS = ['v1'];

/** A deprecated operation (RFC 9745 Deprecation, RFC 8594 Sunset, Link rel="deprecation"). */
interface Deprecation {
  since: Date;
  sunset?: Date;
  /** Where the replacement is documented. */
  link: string;
}

/** Deprecations are declared in one place, keyed by `METHOD /route/pattern`. */
export type DeprecationRegistry = ReadonlyMap<string, Deprecation>;

/** The project's deprecated operations. None yet. */
export const DEPRECATIONS: DeprecationRegistry = new Map();

const VersionLinks = Type.Object({
  self: Type.String({ maxLength: 200 }),
  openapi: Type.String({ maxLength: 200 }),
  docs: Type.String({ maxLength: 200 }),
});

export function installVersioning(app: FastifyInstance, deprecations: DeprecationRegistry): void {
  // The top-level collections of v1 (`GET /v1/<name>`), gathered as the modules register them.
  const collections = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET') && /^\/v1\/[a-z][a-z-]*$/.test(route.url) && !route.schema?.hide) collections.add(route.url);
    if (methods.some((m) => deprecations.has(`${m} ${route.url}`))) {
      route.schema = { ...route.schema, deprecated: true };
      // Only deprecated routes carry the hook that says so.
      const announce = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (e: null, p: unknown) => void) => {
        const d = deprecations.get(`${request.method} ${route.url}`);
        if (d) {
          void reply.header('deprecation', `@${Math.floor(d.since.getTime() / 1000)}`);
          if (d.sunset) void reply.header('sunset', d.sunset.toUTCString());
          void reply.header('link', `<${d.link}>; rel="deprecation"; type="text/html"`);
        }
        done(null, payload);
      };
      route.onSend = [...[route.onSend ?? []].flat(), announce];
    }
  });

  app.get(
    '/',
    {
      config: { auth: false },
      schema: {
        tags: ['meta'],
        summary: 'List API versions',
        operationId: 'listVersions',
        description:
          "The versions this server serves, with links to each one's description and OpenAPI document. No token needed.",
        security: [],
        response: {
          200: Type.Object({
            versions: Type.Array(
              Type.Object({
                version: Type.String({ maxLength: 10 }),
                status: Type.String({ maxLength: 20 }),
                links: VersionLinks,
              }),
              { maxItems: 10 },
            ),
          }),
        },
      },
    },
    async () => ({
      versions: SUPPORTED_VERSIONS.map((v) => ({
        version: v,
        status: 'current',
        links: { self: `/${v}`, openapi: `/${v}/openapi.json`, docs: '/docs' },
      })),
    }),
  );

  app.get(
    '/v1',
    {
      config: { auth: false },
      schema: {
        tags: ['meta'],
        summary: 'Describe API version 1',
        description: 'Where to start: the OpenAPI document, the reference for people, and every top-level resource of v1.',
        operationId: 'getVersion',
        security: [],
        response: {
          200: Type.Object({
            version: Type.String({ maxLength: 10 }),
            status: Type.String({ maxLength: 20 }),
            links: VersionLinks,
            resources: Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }),
          }),
        },
      },
    },
    async () => ({
      version: 'v1',
      status: 'current',
      links: { self: '/v1', openapi: '/v1/openapi.json', docs: '/docs' },
      resources: [...collections].filter((c) => c !== '/v1/openapi.json').sort(),
    }),
  );
}
