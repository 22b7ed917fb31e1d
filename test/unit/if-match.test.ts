import { describe, expect, it } from 'vitest';
import { staleVersion, unlessConditional } from '../../src/lib/if-match.js';

/** A write that loses to a concurrent writer `losses` times, then succeeds. */
const losing = (losses: number) => {
  let calls = 0;
  return {
    calls: () => calls,
    write: async () => {
      calls++;
      if (calls <= losses) throw staleVersion();
      return 'written';
    },
  };
};

describe('a write without If-Match', () => {
  it('is read and written again when a background writer moved the row on meanwhile', async () => {
    const w = losing(2);
    await expect(unlessConditional(undefined, w.write)).resolves.toBe('written');
    expect(w.calls()).toBe(3);
  });

  it('gives up after its attempts, and never retries a write that asked for a version', async () => {
    const often = losing(5);
    await expect(unlessConditional(undefined, often.write)).rejects.toMatchObject({ code: 'precondition_failed' });
    expect(often.calls()).toBe(3);
    const conditional = losing(1);
    await expect(unlessConditional(4, conditional.write)).rejects.toMatchObject({ code: 'precondition_failed' });
    expect(conditional.calls()).toBe(1);
  });

  it('passes any other error on at once', async () => {
    let calls = 0;
    const boom = async () => {
      calls++;
      throw new Error('boom');
    };
    await expect(unlessConditional(undefined, boom)).rejects.toThrow('boom');
    expect(calls).toBe(1);
  });
});
