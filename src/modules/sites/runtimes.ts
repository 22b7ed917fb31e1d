import { Type } from 'typebox';
import type { App } from '../../http/routes.js';
import { Nullable, StringEnum } from '../../http/schemas.js';

const Runtime = Type.Object({
  name: Type.String({ maxLength: 20, description: "What a site's `runtime` takes: `static` or `php-<major>.<minor>`." }),
  kind: StringEnum(['static', 'php'] as const),
  version: Nullable(Type.String({ maxLength: 10, description: 'The PHP version (`8.2`); null for `static`.' })),
});
const Runtimes = Type.Object(
  {
    data: Type.Array(Runtime, { maxItems: 50 }),
    default_php: Nullable(Type.String({ maxLength: 20, description: 'The newest PHP installed; null without PHP.' })),
  },
  { $id: 'Runtimes', description: 'The runtimes installed on the web host.' },
);

/** `GET /v1/runtimes` (SPEC §11): `static` and the PHP versions installed on the web host, newest first. */
export function runtimeRoutes(app: App, phpVersions: readonly string[]): void {
  const php = phpVersions.map((version) => ({ name: `php-${version}`, kind: 'php' as const, version }));
  app.get(
    '/v1/runtimes',
    {
      config: { scope: 'sites:read' },
      schema: {
        tags: ['sites'],
        operationId: 'listRuntimes',
        summary: 'List the runtimes a site may use',
        description:
          "A site's `runtime` is one of these names. PHP needs the plan's `php` feature; a version not listed is a 422 naming the installed ones.",
        response: { 200: Type.Ref('Runtimes') },
      },
    },
    async () => ({
      data: [{ name: 'static', kind: 'static' as const, version: null }, ...php],
      default_php: php[0]?.name ?? null,
    }),
  );
}

export const runtimeSchemas = [Runtimes];
