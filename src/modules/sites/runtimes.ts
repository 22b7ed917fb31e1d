import { Type } from 'typebox';
import type { App } from '../../http/routes.js';

/** `GET /v1/runtimes`: `static` and the PHP versions installed on the web host, newest first. */
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
