import { appendFileSync, existsSync, mkdtempSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCombined, TrafficLog } from '../../src/provisioning/traffic-log.js';

const line = (when: string, bytes: number, request = 'GET / HTTP/1.1') =>
  `127.0.0.1 - - [${when}] "${request}" 200 ${bytes} "-" "curl/8.0"\n`;

describe('nginx access logs counted as traffic', () => {
  it('reads the day in UTC and the body bytes of a combined line', () => {
    expect(parseCombined(line('28/Nov/2026:23:10:00 +0000', 512))).toEqual({ day: '2026-11-28', bytes: 512 });
    expect(parseCombined(line('29/Nov/2026:00:30:00 +0100', 7))).toEqual({ day: '2026-11-28', bytes: 7 });
    expect(parseCombined(line('28/Nov/2026:20:00:00 -0500', 1))).toEqual({ day: '2026-11-29', bytes: 1 });
    // A quote in the request is logged as \x22 by nginx; the line still parses.
    expect(parseCombined(line('28/Nov/2026:10:00:00 +0000', 3, 'GET /\\x22a HTTP/1.1'))).toEqual({ day: '2026-11-28', bytes: 3 });
    expect(parseCombined('not a log line')).toBeNull();
  });

  it('counts each whole line once, across restarts, and reports totals', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'berth-traffic-'));
    const now = () => new Date('2026-11-28T12:00:00Z');
    const reopen = () => Promise.resolve();
    const log = path.join(dir, 'site_a.log');
    writeFileSync(log, line('28/Nov/2026:10:00:00 +0000', 100) + line('27/Nov/2026:10:00:00 +0000', 40));
    // A line still being written is left for the next count.
    appendFileSync(log, '127.0.0.1 - - [28/Nov/2026:10:00:01 +0000] "GET / HTTP/1.1" 200 9');
    const first = await new TrafficLog(dir, { reopen, now }).collect();
    expect(first).toEqual(
      expect.arrayContaining([
        { site_id: 'site_a', day: '2026-11-28', bytes: 100 },
        { site_id: 'site_a', day: '2026-11-27', bytes: 40 },
      ]),
    );
    appendFileSync(log, '9\n' + line('28/Nov/2026:11:00:00 +0000', 1) + line('01/Nov/2026:11:00:00 +0000', 5000));
    // Another reader (a restarted process) goes on from the same file: nothing counted twice.
    const second = await new TrafficLog(dir, { reopen, now }).collect();
    expect(second.find((t) => t.day === '2026-11-28')?.bytes).toBe(100 + 99 + 1);
    // A day older than the days kept is not counted (nor reported).
    expect(second.some((t) => t.day === '2026-11-01')).toBe(false);
    expect(await new TrafficLog(dir, { reopen, now }).collect()).toEqual(second);
  });

  it('rotates a large log, reads what was written to it after the rename, and removes it once quiet', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'berth-traffic-'));
    let clock = new Date('2026-11-28T12:00:00Z');
    let reopened = 0;
    const reopen = async () => {
      reopened++;
    };
    const traffic = new TrafficLog(dir, { reopen, now: () => clock, rotateBytes: 100 });
    const log = path.join(dir, 'site_b.log');
    writeFileSync(log, line('28/Nov/2026:10:00:00 +0000', 10) + line('28/Nov/2026:10:00:00 +0000', 20));
    expect(await traffic.collect()).toEqual([{ site_id: 'site_b', day: '2026-11-28', bytes: 30 }]);
    expect(existsSync(`${log}.1`)).toBe(true);
    expect(reopened).toBe(1);
    // The server wrote one more line to the old file before it reopened, then to a new one.
    appendFileSync(`${log}.1`, line('28/Nov/2026:10:00:01 +0000', 5));
    writeFileSync(log, line('28/Nov/2026:10:00:02 +0000', 7));
    expect(await traffic.collect()).toEqual([{ site_id: 'site_b', day: '2026-11-28', bytes: 42 }]);
    // Five quiet minutes after it was read to its end, the old file goes.
    utimesSync(`${log}.1`, clock, clock);
    clock = new Date(clock.getTime() + 301_000);
    expect(await traffic.collect()).toEqual([{ site_id: 'site_b', day: '2026-11-28', bytes: 42 }]);
    expect(existsSync(`${log}.1`)).toBe(false);
  });

  it('tells the server to reopen when a renamed log has no successor (killed between the rename and the reopen)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'berth-traffic-'));
    let reopened = 0;
    const traffic = new TrafficLog(dir, { reopen: async () => void reopened++ });
    writeFileSync(path.join(dir, 'site_c.log'), line('28/Nov/2026:10:00:00 +0000', 10));
    await traffic.collect();
    expect(reopened).toBe(0);
    renameSync(path.join(dir, 'site_c.log'), path.join(dir, 'site_c.log.1'));
    await traffic.collect();
    expect(reopened).toBe(1);
  });
});
