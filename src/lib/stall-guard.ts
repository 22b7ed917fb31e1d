import { Readable } from 'node:stream';

/**
 * `source` read through, failing ("`what`: no bytes for N s") when it sends nothing for `idleMs`
 * while its reader waits for bytes, or with the source's own error (a response cut off is an
 * "aborted"). The clock runs only while the reader asks for more. A socket's idle timeout also
 * runs while the reader holds bytes back (no bytes arrive then), and so timed out a reader that
 * takes its time over what it has: a database busy with a statement of the dump it loads.
 */
export function stallGuard(source: Readable, idleMs: number, what: string): Readable {
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const arm = () => {
    stop();
    timer = setTimeout(() => out.destroy(new Error(`${what}: no bytes for ${idleMs / 1000} s`)), idleMs);
  };
  const out = new Readable({
    highWaterMark: source.readableHighWaterMark,
    read() {
      if (!timer) arm();
      source.resume();
    },
    destroy(err, done) {
      stop();
      source.destroy(err ?? undefined);
      done(err);
    },
  });
  source.on('data', (chunk: Buffer) => {
    // Still wanted: the clock starts again. Held back: it stops until the reader asks.
    if (out.push(chunk)) arm();
    else {
      stop();
      source.pause();
    }
  });
  source.on('end', () => {
    stop();
    out.push(null);
  });
  source.on('error', (err) => out.destroy(err));
  source.pause();
  return out;
}
