import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.js';
import { eventually } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';

/**
 * `withSessionLock` keeps work on one thing (a domain's mail apply, an account's databases) to one
 * caller at a time, on both engines: on PostgreSQL across processes (an advisory lock), on PGlite
 * within the one process that holds the data directory, where different job queues (a restore and
 * the apply it sends) run side by side.
 */
let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => ({ db, drop } = await freshDb()));
afterAll(async () => {
  await db.close();
  await drop();
});

/** A lock holder that stays in until released. */
function holder(key: string, log: string[], name: string) {
  let release = () => undefined as void;
  const gate = new Promise<void>((r) => (release = r));
  const done = db.withSessionLock(key, async () => {
    log.push(`${name} in`);
    await gate;
    log.push(`${name} out`);
  });
  return { release, done };
}

describe('withSessionLock', () => {
  it('runs one caller of a key at a time, in turn, while another key goes on', async () => {
    const log: string[] = [];
    const first = holder('unit:a', log, 'first');
    await eventually(async () => log.includes('first in'));
    const second = holder('unit:a', log, 'second');
    const other = holder('unit:b', log, 'other');
    await eventually(async () => log.includes('other in'));
    other.release();
    await other.done;
    // The second has had every chance to start: it waits for the first.
    expect(log).not.toContain('second in');
    first.release();
    await first.done;
    await eventually(async () => log.includes('second in'));
    second.release();
    await second.done;
    expect(log.filter((l) => !l.startsWith('other'))).toEqual(['first in', 'first out', 'second in', 'second out']);
  });

  it('lets the next caller in when the holder fails', async () => {
    await expect(
      db.withSessionLock('unit:c', async () => {
        throw new Error('apply failed');
      }),
    ).rejects.toThrow('apply failed');
    expect(await db.withSessionLock('unit:c', async () => 'next')).toBe('next');
  });
});
