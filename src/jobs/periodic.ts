/**
 * A task every process runs on a timer and on demand (`kick`), one run at a time: a kick during
 * a run makes one more run after it, so nothing asked for is missed and runs never overlap.
 * Errors go to `onError`; the loop goes on.
 */
export function periodic(task: () => Promise<unknown>, intervalMs: number, onError: (err: unknown) => void) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await task().catch(onError);
      } while (again && !stopped);
    })().finally(() => (running = null));
  }

  return {
    kick,
    /** Runs now, then every `intervalMs`. */
    start(): void {
      kick();
      timer = setInterval(kick, intervalMs);
      timer.unref();
    },
    /** No new runs; waits for the current one. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
