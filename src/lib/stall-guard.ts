import { Readable } from 'node:stream';

/**
 * `source` read through, failing ("`what`: no bytes for N s") when it sends nothing for `idleMs`
 * while its reader waits for bytes, or ("`what`: cut off") when it closes before its end. The
 * clock runs only while the reader asks for more. A socket's idle timeout also runs while the
 * reader holds bytes back (no bytes arrive then), and so timed out a reader that takes its time
 * over what it has: a database busy with a statement of the dump it loads.
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
  source.on('close', () => {
    // Closed without an end or an error: nothing more will come.
    if (!source.readableEnded && !out.destroyed) out.destroy(new Error(`${what}: cut off`));
  });
  source.pause();
  return out;
}
