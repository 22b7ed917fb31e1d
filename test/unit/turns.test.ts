import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/client.js';
import { turns } from '../../src/lib/turns.js';

/** Counts the turns of the event loop (check phases); the function returned reads the count and stops counting (unless given false). */
function loopTurns() {
  let count = 0;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    count++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return (stop = true) => {
    stopped ||= stop;
    return count;
  };
}

/** Holds the main thread, as a PGlite statement does. */
function busyFor(ms: number) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('turns', () => {
  it('starts an operation at once when none runs', () => {
    const turn = turns();
    let started = false;
    void turn(async () => {
      started = true;
    });
    expect(started).toBe(true);
  });

  it('runs operations one at a time, in order, with a turn of the loop between two when the budget is spent', async () => {
    const turn = turns(0);
    const order: number[] = [];
    const turnsBefore: number[] = [];
    let running = 0;
    let most = 0;
    const stop = loopTurns();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        turn(async () => {
          running++;
          most = Math.max(most, running);
          turnsBefore.push(stop(false));
          busyFor(1);
          await Promise.resolve();
          order.push(i);
          running--;
        }),
      ),
    );
    const seen = stop();
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(1);
    expect(seen).toBeGreaterThanOrEqual(19);
    // Every operation after the first saw the loop turn since the one before it.
    for (let i = 1; i < turnsBefore.length; i++) expect(turnsBefore[i]).toBeGreaterThan(turnsBefore[i - 1] as number);
  });

  it('runs a chain of short operations within the budget without waiting for a turn', async () => {
    const turn = turns(1000);
    const stop = loopTurns();
    for (let i = 0; i < 50; i++) await turn(async () => i);
    expect(stop()).toBe(0);
  });

  it('starts operations for at most the budget per turn', async () => {
    const turn = turns(5);
    const stop = loopTurns();
    const turnOf: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, () =>
        turn(async () => {
          turnOf.push(stop(false));
          busyFor(2);
        }),
      ),
    );
    stop();
    const perTurn = new Map<number, number>();
    for (const t of turnOf) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
    // Started 0, 2 and 4 ms into a turn: at most three, however slow the machine.
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(3);
    expect(perTurn.size).toBeGreaterThanOrEqual(7);
  });

  it("passes an operation's failure to its caller and goes on with the next", async () => {
    const turn = turns();
    const failed = turn(() => Promise.reject(new Error('no')));
    const next = turn(async () => 'yes');
    await expect(failed).rejects.toThrow('no');
    await expect(next).resolves.toBe('yes');
  });
});

describe('PGlite statements', () => {
  const HEAVY = 'SELECT count(*) FROM generate_series(1, 200000)';
  it('let the event loop turn between two of them, whoever sent them', async () => {
    const db = await openDb({ databaseUrl: null, dataDir: '', inMemory: true });
    try {
      const stop = loopTurns();
      // As 32 requests read from their sockets in one go send theirs: each statement takes longer
      // than a turn's budget (5 ms; about 25 ms here), so each has a turn of its own.
      await Promise.all(
        Array.from({ length: 32 }, (_, i) => (i % 4 === 0 ? db.transaction((tx) => tx.query(HEAVY)) : db.query(HEAVY))),
      );
      expect(stop()).toBeGreaterThanOrEqual(31);
    } finally {
      await db.close();
    }
  });
});
