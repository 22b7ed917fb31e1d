import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { agentDownload } from '../../src/agent/client.js';
import { httpsListener } from '../helpers/https-listener.js';

/**
 * An agent's download of an artifact over HTTPS (the control plane's listener stands in for a
 * server here): the reader may hold bytes back as long as it likes; a sender that stops while
 * the reader waits, or cuts the connection, fails the read.
 */
const IDLE_MS = 300;
const CHUNK = Buffer.alloc(64 * 1024, 7);
const control = httpsListener();

/** A listener answering every GET with `send`, and the URL it listens at. */
const listener = (send: (res: ServerResponse) => void) => control.listen((_req, res) => send(res));

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
    const body = await agentDownload(url, { ca_pem: control.ca().certificate_pem }, '/artifact', { idleMs: IDLE_MS });
    // The sender is held back meanwhile (the socket idle, both ways), as a socket's idle timeout would not allow.
    expect(await read(body, 5 * IDLE_MS)).toBe(64 * CHUNK.length);
  });

  it('a sender that stops while the reader waits fails the read, saying so', async () => {
    const url = await listener((res) => void sendChunks(res, 2, false));
    const body = await agentDownload(url, { ca_pem: control.ca().certificate_pem }, '/artifact', { idleMs: IDLE_MS });
    await expect(read(body)).rejects.toThrow(`/artifact from ${url}: no bytes for 0.3 s`);
  });

  it('a connection cut off mid-body fails the read', async () => {
    const url = await listener((res) => {
      void sendChunks(res, 2, false).then(() => res.socket?.destroy());
    });
    const body = await agentDownload(url, { ca_pem: control.ca().certificate_pem }, '/artifact', { idleMs: 60_000 });
    await expect(read(body)).rejects.toThrow();
  });
});
