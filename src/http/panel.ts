import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { notFound } from '../lib/errors.js';
import type { App } from './routes.js';

/** Where `npm run build:panel` (run by `npm ci`) writes the panel's files. */
const PANEL_DIR = path.resolve(import.meta.dirname, '..', '..', 'dist', 'panel');

// Scripts, styles and calls from this server only; nothing inline, no frames.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The reference panel at /panel/ and the API reference at /docs: static files built from panel/
 * (React on the public API and the SDK alone). The pages are public; everything the panel shows
 * comes from API calls with the token the person signs in with, held in the tab's session storage.
 */
export function panelRoutes(app: App, dir = PANEL_DIR): void {
  const page = { auth: false, rateLimit: false } as const;
  const html = (url: string, file: string, what: string) =>
    app.get(url, { config: page, schema: { hide: true } }, async (_request, reply) => {
      const body = await readFile(path.join(dir, file), 'utf8').catch(() => null);
      if (body === null) throw notFound(`${what} (it is not built: run \`npm run build:panel\`)`);
      return reply
        .header('content-security-policy', CSP)
        .header('cache-control', 'no-cache')
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .type('text/html; charset=utf-8')
        .send(body);
    });
  app.get('/panel', { config: page, schema: { hide: true } }, async (_request, reply) => reply.redirect('/panel/', 301));
  html('/panel/', 'index.html', 'the panel');
  html('/docs', 'docs.html', 'the API reference');
  app.get('/docs/', { config: page, schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs', 301));

  // Built files carry their content's hash in their name: cached for good.
  app.get(
    '/panel/assets/:file',
    {
      config: page,
      schema: { hide: true, params: Type.Object({ file: Type.String({ pattern: '^[\\w.-]+$', maxLength: 100 }) }) },
    },
    async (request, reply) => {
      const { file } = request.params;
      const type = TYPES[path.extname(file)];
      const body = type ? await readFile(path.join(dir, 'assets', path.basename(file))).catch(() => null) : null;
      if (!body || !type) throw notFound(`panel file ${file}`);
      return reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .type(type)
        .send(body);
    },
  );
}
