import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { closeConnectionsOnClose } from '../../src/http/connections.js';
import { createCertificateAuthority, signWithCertificateAuthority } from '../../src/tls/internal-ca.js';
import { generateKey } from '../../src/tls/keys.js';
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

it('on HTTPS (the agent listener), closes idle connections at once and lets a response under way finish', async () => {
  const now = new Date();
  const ca = await createCertificateAuthority('close test', now);
  const key = await generateKey();
  const app = Fastify({ https: { key, cert: await signWithCertificateAuthority(ca, ['127.0.0.1'], key, now) } });
  closeConnectionsOnClose(app);
  let answer!: () => void;
  let entered!: () => void;
  const held = new Promise<void>((resolve) => (answer = resolve));
  const inFlight = new Promise<void>((resolve) => (entered = resolve));
  app.get('/quick', async () => 'quick');
  app.get('/held', async () => {
    entered();
    await held;
    return 'held';
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, ca: ca.certificate_pem });
  const get = (path: string) =>
    new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  const busy = get('/held');
  await inFlight;
  expect(await get('/quick')).toBe('quick'); // on a second connection, now idle and kept alive
  const started = Date.now();
  const closed = app.close();
  while (app.server.listening) await new Promise((resolve) => setImmediate(resolve));
  answer();
  // Cut off with the idle one, had the TLS sockets not been the ones tracked.
  expect(await busy).toBe('held');
  await closed;
  expect(Date.now() - started).toBeLessThan(10_000);
  agent.destroy();
});
