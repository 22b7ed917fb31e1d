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
 *
 * The input is copied into blocks of a fixed size from a free list, and a block goes back to it
 * once its member is written: a backup of 500 MB no longer allocates 500 MB of blocks for the
 * collector to find (packing the benchmark's 500 MB: 2.7-3.1 s instead of 2.9-3.8).
 */
export function parallelGzip(o: { blockBytes?: number; parallel?: number; zlib?: ZlibOptions } = {}): Transform {
  const blockBytes = o.blockBytes ?? 1024 * 1024;
  const parallel = o.parallel ?? 8;
  const free: Buffer[] = [];
  let block: Buffer | null = null;
  let filled = 0;
  const inFlight: { block: Buffer; member: Promise<Buffer> }[] = [];
  const start = () => {
    block ??= Buffer.alloc(0); // an empty input is one empty member
    const member = gzipBlock(block.subarray(0, filled), o.zlib);
    member.catch(() => undefined); // awaited in order below; a failure surfaces there
    inFlight.push({ block, member });
    block = null;
    filled = 0;
  };
  /** Writes the finished members, oldest first, until at most `keep` are still being compressed. */
  const drain = async (stream: Transform, keep: number) => {
    while (inFlight.length > keep) {
      const done = inFlight.shift() as (typeof inFlight)[number];
      stream.push(await done.member);
      free.push(done.block);
    }
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      for (let at = 0; at < chunk.length;) {
        block ??= free.pop() ?? Buffer.allocUnsafeSlow(blockBytes);
        const n = chunk.copy(block, filled, at);
        filled += n;
        at += n;
        if (filled === blockBytes) start();
      }
      drain(this, parallel - 1).then(() => done(), done);
    },
    flush(done) {
      if (filled > 0 || inFlight.length === 0) start();
      drain(this, 0).then(() => done(), done);
    },
  });
}
