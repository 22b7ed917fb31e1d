/**
 * Progress looked at while work runs: `measure` every `everyMs`, each result handed to `record`
 * in order (one at a time, never two at once), until `stop`, which waits for the one under way:
 * nothing is recorded after it, so a final figure written then stays.
 */
export function sampledProgress(o: { measure: () => Promise<number>; record: (n: number) => Promise<void>; everyMs: number }) {
  let sample: Promise<void> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    sample = sample
      .then(async () => {
        const n = await o.measure();
        if (!stopped) await o.record(n);
      })
      .catch(() => undefined);
  }, o.everyMs);
  return {
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await sample;
    },
  };
}
