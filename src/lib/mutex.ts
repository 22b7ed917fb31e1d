/**
 * Runs the tasks given to it one at a time, in order: a lock inside one process for a resource
 * that is not safe to change concurrently (a joined file, a daemon's configuration).
 */
export function mutex() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task);
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * A `mutex()` per key: the tasks of one key run one at a time, in order, while other keys' run
 * alongside. A key is forgotten once its last task has ended.
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
