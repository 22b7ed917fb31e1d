import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { Relay } from '../../src/modules/servers/relay.js';

const chunks = (n: number) => Array.from({ length: n }, () => randomBytes(64 * 1024));

/** Everything `from` gives, gathered (a slow reader waits `delayMs` per chunk). */
function gather(from: Readable, delayMs = 0): Promise<Buffer> {
  const got: Buffer[] = [];
  return pipeline(
    from,
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        got.push(chunk);
        setTimeout(done, delayMs);
      },
    }),
  ).then(() => Buffer.concat(got));
}

describe('a relay between two servers', () => {
  it('passes every byte on to the receiving side as well, once, at the pace of the slower', async () => {
    const relay = new Relay();
    const sent = chunks(64); // 4 MiB: more than the relay holds, so the receiver's pace counts
    const received = relay.take() as Readable;
    expect(relay.take()).toBeUndefined(); // a retried request gets nothing: the bytes went to the first
    const [here, there] = await Promise.all([gather(Readable.from(sent).pipe(relay.tee())), gather(received, 1)]);
    expect(here.equals(Buffer.concat(sent))).toBe(true);
    expect(there.equals(Buffer.concat(sent))).toBe(true);
    expect(relay.wanted).toBe(true);
  });

  it('goes on without a receiver that never comes, once it has waited its while', async () => {
    const relay = new Relay({ stallMs: 50 });
    const sent = chunks(64);
    expect((await gather(Readable.from(sent).pipe(relay.tee()))).equals(Buffer.concat(sent))).toBe(true);
    expect(relay.wanted).toBe(false);
    expect(relay.take()).toBeUndefined();
  });

  it('goes on without a receiver that stops taking bytes half-way', async () => {
    const relay = new Relay({ stallMs: 50 });
    const received = relay.take() as Readable;
    received.once('data', () => received.pause()); // one chunk, then nothing
    const sent = chunks(64);
    expect((await gather(Readable.from(sent).pipe(relay.tee()))).equals(Buffer.concat(sent))).toBe(true);
    await expect(gather(received)).rejects.toThrow(/took no bytes/);
  });

  it('ends the receiving side in an error when it is dropped, as when the sending side failed', async () => {
    const relay = new Relay();
    const received = relay.take() as Readable;
    const tee = relay.tee();
    tee.write(randomBytes(1024));
    relay.drop('the copy from the sending server failed');
    await expect(gather(received)).rejects.toThrow(/sending server failed/);
    expect(relay.wanted).toBe(true); // taken: its task ends by its own report
  });
});
