import { Transform } from 'node:stream';

/**
 * Bytes joined into pieces of at least `bytes` (the last one may be less), for a file written as
 * a socket delivers: TLS hands over 16 KiB at a time, and each write of a file stream is a trip
 * through the thread pool, where it waits behind every other file operation of the process (a
 * move's dump behind its copy's `lstat`s and links: bench/HISTORY.md, 2026-11-30, night).
 */
export function inPieces(bytes: number): Transform {
  let waiting: Buffer[] = [];
  let waitingBytes = 0;
  const piece = () => {
    const joined = Buffer.concat(waiting, waitingBytes);
    waiting = [];
    waitingBytes = 0;
    return joined;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      waiting.push(chunk);
      waitingBytes += chunk.length;
      done(null, waitingBytes >= bytes ? piece() : undefined);
    },
    flush(done) {
      done(null, waitingBytes > 0 ? piece() : undefined);
    },
  });
}
