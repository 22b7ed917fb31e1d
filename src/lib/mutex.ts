/**
 * Runs the tasks given to it one at a time, in order, per key: the tasks of one key wait for
 * each other while other keys' run alongside. A lock inside one process for a resource that is
 * not safe to change concurrently (a joined file, a daemon's configuration, an apply unit). A key
 * is forgotten once its last task has ended.
 */
export function keyedMutex() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}

/** One key's worth of `keyedMutex()`: the tasks given to it run one at a time, in order. */
export function mutex() {
  const locked = keyedMutex();
  return <T>(task: () => Promise<T>): Promise<T> => locked('', task);
}
