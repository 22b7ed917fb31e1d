import { Transform } from 'node:stream';
import type { ZlibOptions } from 'node:zlib';
import { gzipBlock } from './stored-gzip.js';

/**
 * gzip as pigz does it: the input cut into blocks compressed in parallel on libuv's thread pool
 * (8 in flight keep two cores busy; fewer left them waiting in the benchmark),
 * written in order as consecutive gzip members. A stream of members is a standard gzip file
 * (RFC 1952 §2.2): `tar -xzf`, `gunzip` and Node's own gunzip read it whole.
 *
 * Within a block, runs that look random (already compressed: images, video, archives) become
 * members of stored blocks at once, and only the rest goes to zlib: level 6 would spend 20 ms
 * per MiB on them to write stored blocks of the same size (stored-gzip.ts).
 */
export function parallelGzip(o: { blockBytes?: number; parallel?: number; zlib?: ZlibOptions } = {}): Transform {
  const blockBytes = o.blockBytes ?? 1024 * 1024;
  const parallel = o.parallel ?? 8;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const inFlight: Promise<Buffer>[] = [];
  const start = (block: Buffer) => {
    const p = gzipBlock(block, o.zlib);
    p.catch(() => undefined); // awaited in order below; a failure surfaces there
    inFlight.push(p);
  };
  /** Writes the finished blocks, oldest first, until at most `keep` are still being compressed. */
  const drain = async (stream: Transform, keep: number) => {
    while (inFlight.length > keep) stream.push(await (inFlight.shift() as Promise<Buffer>));
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= blockBytes) {
        const all = Buffer.concat(pending, pendingBytes);
        let at = 0;
        for (; all.length - at >= blockBytes; at += blockBytes) start(all.subarray(at, at + blockBytes));
        pending = at < all.length ? [all.subarray(at)] : [];
        pendingBytes = all.length - at;
      }
      drain(this, parallel - 1).then(() => done(), done);
    },
    flush(done) {
      if (pendingBytes > 0 || inFlight.length === 0) start(Buffer.concat(pending, pendingBytes));
      drain(this, 0).then(() => done(), done);
    },
  });
}
