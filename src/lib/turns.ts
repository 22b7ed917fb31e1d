/**
 * Runs the operations given to it one at a time, in order, and lets the event loop turn between
 * two of them: an operation that arrives while another runs, or after another ended in this turn
 * of the loop, waits for the next turn. Timers, new connections and other sockets get the loop
 * between two operations that each hold the main thread (see the PGlite client).
 */
export function turns() {
  let busy = false;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else busy = false;
  };
  return async <T>(op: () => Promise<T>): Promise<T> => {
    if (busy) await new Promise<void>((resolve) => waiting.push(resolve));
    busy = true;
    try {
      return await op();
    } finally {
      setImmediate(release);
    }
  };
}
