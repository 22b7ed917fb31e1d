import { SingleBar } from 'cli-progress';

/** A byte progress bar on stderr when it is a terminal; a single summary line otherwise. */
export function byteProgress(label: string, total: number, start = 0) {
  const mb = (n: number) => (n / 1048576).toFixed(1);
  const bar = process.stderr.isTTY
    ? new SingleBar({
        format: `${label} [{bar}] {percentage}% | {done}/{size} MB | {eta}s`,
        stream: process.stderr,
        hideCursor: true,
      })
    : null;
  let done = start;
  bar?.start(total, start, { done: mb(start), size: mb(total) });
  return {
    add(n: number) {
      done += n;
      bar?.update(done, { done: mb(done), size: mb(total) });
    },
    stop() {
      bar?.stop();
      if (!bar) process.stderr.write(`${label}: ${mb(done)} of ${mb(total)} MB\n`);
    },
  };
}
