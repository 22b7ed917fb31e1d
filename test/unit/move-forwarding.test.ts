import { describe, expect, it } from 'vitest';
import type { MoveRow } from '../../src/modules/moves/repo.js';
import { forwardUntil } from '../../src/modules/moves/runner.js';

const move = (loweredAt: string | null, lowered: Record<string, number>) =>
  ({
    cut_over_at: '2026-11-28T12:10:00.000Z',
    lowered_ttls: lowered,
    steps: [{ name: 'lower_ttl', state: 'done', started_at: loweredAt, ended_at: loweredAt }],
  }) as unknown as MoveRow;

describe('how long a move’s source forwards', () => {
  it('for the longest old TTL after the lowering, when that ends later', () => {
    expect(forwardUntil(move('2026-11-28T12:00:00.000Z', { rec_a: 3600, rec_b: 300 }), 60)).toBe('2026-11-28T13:00:00.000Z');
  });

  it('for the lowered TTL after the cutover, when that ends later or nothing was lowered', () => {
    expect(forwardUntil(move('2026-11-28T12:00:00.000Z', { rec_a: 300 }), 60)).toBe('2026-11-28T12:11:00.000Z');
    expect(forwardUntil(move('2026-11-28T12:00:00.000Z', {}), 5)).toBe('2026-11-28T12:10:05.000Z');
  });
});
