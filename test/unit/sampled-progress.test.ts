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
        // The third record is slow: the timer fires again meanwhile.
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
});
