/**
 * How much longer than a measurement took the next waits at least: measuring (a walk of the
 * copy's files, longer as the copy grows) takes at most a twentieth of the time, whatever the
 * copy's size and the machine's speed.
 */
const PAUSE_PER_MEASURE = 19;

/**
 * Progress looked at while work runs: `measure` every `everyMs` (or longer: see
 * PAUSE_PER_MEASURE), each result handed to `record` in order (one at a time, never two at once),
 * until `stop`, which waits for the one under way: nothing is recorded after it, so a final
 * figure written then stays.
 */
export function sampledProgress(o: { measure: () => Promise<number>; record: (n: number) => Promise<void>; everyMs: number }) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let sample: Promise<void> = Promise.resolve();
  const after = (ms: number) => {
    timer = setTimeout(() => {
      sample = take();
    }, ms);
  };
  const take = async () => {
    const started = performance.now();
    try {
      const n = await o.measure();
      if (!stopped) await o.record(n);
    } catch {
      // A sample that failed is skipped: the next one may succeed.
    }
    if (!stopped) after(Math.max(o.everyMs, PAUSE_PER_MEASURE * (performance.now() - started)));
  };
  after(o.everyMs);
  return {
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await sample;
    },
  };
}
