import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { createTestApp, OPERATOR_TOKEN } from '../helpers/app.js';

it('closes at once when a keep-alive connection’s response was still finishing as the close began', async () => {
  let finish!: () => void;
  const t = await createTestApp({
    deps: {
      // A download's shape: the client has every byte (Content-Length) before the server's
      // stream ends, as a file's last read returns after its data was sent.
      extraRoutes: (app) =>
        app.get('/v1/_test/finishing', { schema: { hide: true } }, async (_req, reply) => {
          const body = new Readable({ read: () => undefined });
          body.push('0123456789');
          finish = () => body.push(null);
          return reply.header('content-length', '10').type('text/plain').send(body);
        }),
    },
  });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = t.app.server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/v1/_test/finishing`, {
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
  });
  expect(await res.text()).toBe('0123456789');
  expect(res.headers.get('connection')).toBe('keep-alive');

  const started = Date.now();
  const closed = t.close();
  while (t.app.server.listening) await new Promise((resolve) => setImmediate(resolve));
  finish();
  await closed;
  // Otherwise the connection, idle once its response ended, holds the close for the keep-alive timeout (72 s).
  expect(Date.now() - started).toBeLessThan(10_000);
});
