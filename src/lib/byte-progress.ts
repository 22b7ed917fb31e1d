import { Transform } from 'node:stream';

/**
 * Progress of work measured in bytes against a known total, mapped onto `[from, to]` percent
 * and reported at most every `everyMs` (an operation's row is not written per chunk).
 */
export function byteProgress(o: {
  total: number;
  from: number;
  to: number;
  report: (percent: number) => void;
  everyMs?: number;
}) {
  let done = 0;
  let last = 0;
  const percent = () => Math.min(o.to, o.from + Math.floor(((o.to - o.from) * done) / Math.max(1, o.total)));
  const add = (bytes: number) => {
    done += bytes;
    const now = Date.now();
    if (now - last < (o.everyMs ?? 1000)) return;
    last = now;
    o.report(percent());
  };
  /** A pass-through stream that counts what flows through it. */
  const counter = () =>
    new Transform({
      transform(chunk: Buffer, _enc, next) {
        add(chunk.length);
        next(null, chunk);
      },
    });
  return { add, counter };
}
