import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { agentUpload } from '../../src/agent/client.js';
import { httpsListener } from '../helpers/https-listener.js';

/**
 * An agent's upload of a task's output over HTTPS (the control plane's listener stands in for a
 * server here): the body's maker may take as long as it likes before its next bytes; a control
 * plane that takes no bytes while there are some, or gives no answer once all are sent, fails it.
 */
const IDLE_MS = 300;
const CHUNK = Buffer.alloc(64 * 1024, 7);
const control = httpsListener();

/** Reads the whole body, then answers 204 (stored); the bytes it read, through `got`. */
const storing = (got: (bytes: number) => void) => (req: IncomingMessage, res: ServerResponse) => {
  let bytes = 0;
  req.on('data', (c: Buffer) => (bytes += c.length));
  req.on('end', () => {
    got(bytes);
    res.writeHead(204).end();
  });
};

/** A body that never ends, written as fast as it is taken. */
const endless = () =>
  new Readable({
    read() {
      this.push(CHUNK);
    },
  });

const upload = (url: string, body: Readable) =>
  agentUpload(url, { ca_pem: control.ca().certificate_pem }, '/output', body, { idleMs: IDLE_MS });

describe('agentUpload', () => {
  it('a body whose maker has nothing for many times the idle bound (a dump waiting on a lock) is still sent whole', async () => {
    let stored = -1;
    const url = await control.listen(storing((bytes) => (stored = bytes)));
    const body = new PassThrough();
    const sent = upload(url, body);
    body.write(CHUNK);
    await new Promise((r) => setTimeout(r, 5 * IDLE_MS));
    body.end(CHUNK);
    await sent;
    expect(stored).toBe(2 * CHUNK.length);
  });

  it('a control plane that takes no bytes while there are some fails the upload, saying so, and ends the body', async () => {
    const url = await control.listen((req) => req.pause());
    const body = endless();
    await expect(upload(url, body)).rejects.toThrow(`/output to ${url}: took no bytes for 0.3 s`);
    expect(body.destroyed).toBe(true);
  });

  it('a control plane that takes every byte but gives no answer fails the upload, saying so', async () => {
    const url = await control.listen((req) => req.resume());
    await expect(upload(url, Readable.from([CHUNK, CHUNK]))).rejects.toThrow(`/output to ${url}: no answer for 0.3 s`);
  });

  it("a refusal's detail is the error, and the body is ended", async () => {
    const url = await control.listen((req, res) => {
      req.resume();
      res.writeHead(413, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ detail: 'too large' }));
    });
    const body = endless();
    await expect(upload(url, body)).rejects.toThrow('/output: 413 too large');
    expect(body.destroyed).toBe(true);
  });
});
