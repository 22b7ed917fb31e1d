import type { ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentDownload } from '../../src/agent/client.js';
import {
  createCertificateAuthority,
  signWithCertificateAuthority,
  type CertificateAuthority,
} from '../../src/tls/internal-ca.js';
import { generateKey } from '../../src/tls/keys.js';

/**
 * An agent's download of an artifact over HTTPS (the control plane's listener stands in for a
 * server here): the reader may hold bytes back as long as it likes; a sender that stops while
 * the reader waits, or cuts the connection, fails the read.
 */
const IDLE_MS = 300;
const CHUNK = Buffer.alloc(64 * 1024, 7);
let ca: CertificateAuthority;
let tls: { key: string; cert: string };
let server: https.Server | undefined;

beforeAll(async () => {
  ca = await createCertificateAuthority('test', new Date());
  const key = await generateKey();
  tls = { key, cert: await signWithCertificateAuthority(ca, ['127.0.0.1'], key, new Date()) };
});
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

/** A listener answering every GET with `send`, and the URL it listens at. */
async function listener(send: (res: ServerResponse) => void): Promise<string> {
  server = https.createServer(tls, (_req, res) => send(res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** `count` chunks, each written once the one before drained. */
async function sendChunks(res: ServerResponse, count: number, end = true) {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  for (let i = 0; i < count; i++) if (!res.write(CHUNK)) await new Promise((r) => res.once('drain', r));
  if (end) res.end();
}

/** Reads `body` through, holding the first chunk `holdMs` (a database busy with what it read); the bytes read. */
async function read(body: NodeJS.ReadableStream, holdMs = 0): Promise<number> {
  let bytes = 0;
  await pipeline(
    body,
    new Writable({
      highWaterMark: CHUNK.length,
      write(chunk: Buffer, _encoding, done) {
        const held = bytes === 0 ? holdMs : 0;
        bytes += chunk.length;
        setTimeout(done, held);
      },
    }),
  );
  return bytes;
}

describe('agentDownload', () => {
  it('a reader that holds bytes back for many times the idle bound still reads every byte', async () => {
    const url = await listener((res) => void sendChunks(res, 64));
    const body = await agentDownload(url, { ca_pem: ca.certificate_pem }, '/artifact', { idleMs: IDLE_MS });
    // The sender is held back meanwhile (the socket idle, both ways), as a socket's idle timeout would not allow.
    expect(await read(body, 5 * IDLE_MS)).toBe(64 * CHUNK.length);
  });

  it('a sender that stops while the reader waits fails the read, saying so', async () => {
    const url = await listener((res) => void sendChunks(res, 2, false));
    const body = await agentDownload(url, { ca_pem: ca.certificate_pem }, '/artifact', { idleMs: IDLE_MS });
    await expect(read(body)).rejects.toThrow(`/artifact from ${url}: no bytes for 0.3 s`);
  });

  it('a connection cut off mid-body fails the read', async () => {
    const url = await listener((res) => {
      void sendChunks(res, 2, false).then(() => res.socket?.destroy());
    });
    const body = await agentDownload(url, { ca_pem: ca.certificate_pem }, '/artifact', { idleMs: 60_000 });
    await expect(read(body)).rejects.toThrow();
  });
});
