import { describe, expect, it } from 'vitest';
import { sampledProgress } from '../../src/modules/moves/progress.js';

const until = async (ok: () => boolean) => {
  for (const start = Date.now(); !ok(); await new Promise((r) => setTimeout(r, 5)))
    if (Date.now() - start > 5000) throw new Error('condition not met in time');
};

describe('progress looked at while work runs', () => {
  it('records each measurement in order, one at a time, and nothing once stopped, even one under way', async () => {
    const recorded: number[] = [];
    let running = 0;
    let most = 0;
    let n = 0;
    let release: (() => void) | undefined;
    const progress = sampledProgress({
      measure: async () => ++n,
      record: async (v) => {
        most = Math.max(most, ++running);
        // The third record is slow: the stop comes while it is under way.
        if (v === 3) await new Promise<void>((r) => (release = r));
        recorded.push(v);
        running--;
      },
      everyMs: 5,
    });
    await until(() => release !== undefined);
    const stopped = progress.stop();
    release?.();
    await stopped;
    const after = [...recorded];
    await new Promise((r) => setTimeout(r, 30));
    expect(after).toEqual([1, 2, 3]);
    expect(recorded).toEqual(after);
    expect(most).toBe(1);
  });

  it('waits between measurements at least nineteen times as long as the last one took', async () => {
    const taken: [number, number][] = [];
    const progress = sampledProgress({
      measure: async () => {
        const start = performance.now();
        await new Promise((r) => setTimeout(r, 20));
        taken.push([start, performance.now()]);
        return taken.length;
      },
      record: async () => undefined,
      everyMs: 1,
    });
    await until(() => taken.length >= 3);
    await progress.stop();
    // From one start to the next: the measurement, then at least 19 times its length. A timer
    // may fire up to two milliseconds early: its delay is kept in whole milliseconds, and so is
    // the event loop's clock it is checked against (once 0.3 ms short of one).
    for (const [i, [start, end]] of taken.slice(0, -1).entries())
      expect((taken[i + 1] as [number, number])[0] - start).toBeGreaterThanOrEqual(20 * (end - start) - 2);
  });
});
