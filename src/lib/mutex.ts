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
