import { Type } from 'typebox';
import type { Db } from '../db/client.js';
import { migrationsApplied } from '../db/migrate.js';
import { forbidden, notFound, unavailable } from '../lib/errors.js';
import { callerOf } from './auth.js';
import type { Metrics } from './metrics.js';
import { PROBLEMS, PROBLEM_CODES } from './problems.js';
import type { App } from './routes.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Health probes, Prometheus metrics and the documentation page of each problem code. */
export function metaRoutes(app: App, db: Db, metrics: Metrics): void {
  const probe = { auth: false, rateLimit: false } as const;
  const Health = Type.Object({ status: Type.String({ maxLength: 20 }) });

  app.get('/healthz', { config: probe, schema: { hide: true, response: { 200: Health } } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: probe, schema: { hide: true, response: { 200: Health } } }, async () => {
    let ready = false;
    try {
      ready = await migrationsApplied(db);
    } catch {
      ready = false;
    }
    if (!ready) throw unavailable('The database is unreachable or not migrated.', 5);
    return { status: 'ready' };
  });

  app.get('/metrics', { config: { scope: '*' }, schema: { hide: true } }, async (request, reply) => {
    if (callerOf(request).principal.kind !== 'operator') throw forbidden('Metrics are for operator tokens.');
    return reply.type(metrics.contentType).send(await metrics.render());
  });

  app.get(
    '/problems/:code',
    {
      config: { auth: false },
      schema: { hide: true, params: Type.Object({ code: Type.String({ maxLength: 100 }) }) },
    },
    async (request, reply) => {
      const code = request.params.code as keyof typeof PROBLEMS;
      const doc = PROBLEM_CODES.includes(code) ? PROBLEMS[code] : undefined;
      if (!doc) throw notFound(`problem type ${request.params.code}`);
      const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(doc.title)}</title></head>
<body><h1>${escapeHtml(doc.title)}</h1><p>HTTP status <strong>${doc.status}</strong>, code <code>${escapeHtml(code)}</code>.</p>
<p>${escapeHtml(doc.description)}</p><p><a href="/problems">All problem types</a></p></body></html>`;
      return reply.type('text/html; charset=utf-8').send(html);
    },
  );

  app.get('/problems', { config: { auth: false }, schema: { hide: true } }, async (_request, reply) => {
    const items = PROBLEM_CODES.map(
      (c) => `<li><a href="/problems/${c}"><code>${c}</code></a> (${PROBLEMS[c].status}): ${escapeHtml(PROBLEMS[c].title)}</li>`,
    );
    return reply
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Berth problem types</title></head><body><h1>Problem types</h1><ul>${items.join('')}</ul></body></html>`,
      );
  });
}
