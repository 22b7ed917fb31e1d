/**
 * Runs the operations given to it one at a time, in order, and starts them for at most
 * `budgetMs` per turn of the event loop: one that would start later than that after the turn's
 * first waits for the next turn. Timers, new connections and other sockets get the loop between
 * two such stretches of operations that hold the main thread (see the PGlite client), while a
 * chain of short ones (a request's few statements) runs without waiting.
 */
export function turns(budgetMs = 5) {
  let running = false;
  /** When the first operation of this turn started; null once the turn ended. */
  let turnStarted: number | null = null;
  const waiting: (() => void)[] = [];

  const withinTurn = () => turnStarted === null || performance.now() - turnStarted < budgetMs;
  /** The next waiting operation goes now; it holds the turn from here, so nothing overtakes it. */
  const handOff = () => {
    const next = waiting.shift();
    if (!next) return;
    running = true;
    next();
  };
  const endTurn = () => {
    turnStarted = null;
    if (!running) handOff();
  };

  return async <T>(op: () => Promise<T>): Promise<T> => {
    if (running || waiting.length > 0 || !withinTurn()) await new Promise<void>((resolve) => waiting.push(resolve));
    else running = true;
    if (turnStarted === null) {
      turnStarted = performance.now();
      setImmediate(endTurn);
    }
    try {
      return await op();
    } finally {
      running = false;
      if (withinTurn()) handOff();
    }
  };
}
