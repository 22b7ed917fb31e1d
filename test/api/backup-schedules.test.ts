import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, TestClock, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

/** Schedules: validation, slots in a time zone, once per slot with two processes, missed slots, retention. */
const HOUR = 3600_000;
const clock = new TestClock(Date.parse('2026-11-22T10:00:00.000Z'));
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  const env = { BERTH_BACKUP_SCHEDULER_MS: '50' };
  a = await createTestApp({ env, clock });
  // A second process on the same database, its own data directory and scheduler.
  b = await createTestApp({ env, clock, db: a.db, dataDir: a.dataDir });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const backupsOf = async (scheduleId: string) =>
  (
    await a.db.query<{ id: string; status: string }>('SELECT id, status FROM backups WHERE schedule_id = $1 ORDER BY id', [
      scheduleId,
    ])
  ).rows;

describe('backup schedules', () => {
  it('validates cron and time zone, and computes the next slot in the time zone', async () => {
    const acc = await createAccount(a, (await createPlan(a)).id);
    const cases: [Record<string, unknown>, string][] = [
      [{ cron: '61 * * * *' }, '/cron'],
      [{ cron: '* * * *' }, '/cron'],
      [{ cron: '0 0 * * * *' }, '/cron'],
      [{ timezone: 'Mars/Olympus_Mons' }, '/timezone'],
      [{ retain: 0 }, '/retain'],
      [{ include: ['files'] }, '/include/0'],
    ];
    for (const [body, pointer] of cases) {
      const r = await a.post('/v1/backup-schedules', { account_id: acc.id, cron: '30 2 * * *', retain: 3, ...body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    }
    const r = await a.post('/v1/backup-schedules', {
      account_id: acc.id,
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      retain: 3,
    });
    expect(r.status, r.text).toBe(201);
    // 02:30 in Berlin (UTC+1 in November) is 01:30 UTC, the next morning.
    expect(r.body).toMatchObject({
      next_run_at: '2026-11-23T01:30:00.000Z',
      last_run_at: null,
      include: ['sites', 'emails', 'dns', 'databases', 'cron_jobs', 'ssh'],
    });
    const listed = await a.get(`/v1/backup-schedules?account_id=${acc.id}`);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: r.body.id, cron: '30 2 * * *', retain: 3 })]);
    const moved = await a.request('PATCH', `/v1/backup-schedules/${r.body.id}`, { body: { timezone: 'America/New_York' } });
    expect(moved.body.next_run_at).toBe('2026-11-23T07:30:00.000Z');
    const off = await a.request('PATCH', `/v1/backup-schedules/${r.body.id}`, { body: { enabled: false } });
    expect(off.body.next_run_at).toBe(null);
    const replaced = await a.request('PUT', `/v1/backup-schedules/${r.body.id}`, {
      body: { cron: '0 4 * * 0', timezone: 'UTC', include: ['sites', 'dns'], retain: 2, enabled: true },
    });
    expect(replaced.status, replaced.text).toBe(200);
    // Sunday 04:00 UTC after Sunday 2026-11-22 10:00 is a week later.
    expect(replaced.body).toMatchObject({
      include: ['sites', 'dns'],
      retain: 2,
      next_run_at: '2026-11-29T04:00:00.000Z',
      version: 4,
    });
    expect((await a.request('PUT', `/v1/backup-schedules/${r.body.id}`, { body: { cron: '0 4 * * 0' } })).status).toBe(422);
    expect((await a.request('DELETE', `/v1/backup-schedules/${r.body.id}`)).status).toBe(204);
  });

  it('runs once per slot with two processes, runs a missed slot once, and expires past retain', async () => {
    const acc = await createAccount(a, (await createPlan(a, undefined, { max_backups: 5 })).id);
    await a.post('/v1/domains', { account_id: acc.id, name: 'scheduled.io' });
    const s = (await a.post('/v1/backup-schedules', { account_id: acc.id, cron: '0 * * * *', retain: 2, include: ['dns'] })).body;
    expect(s.next_run_at).toBe('2026-11-22T11:00:00.000Z');

    const slot = async (advanceMs: number, expected: number) => {
      clock.advance(advanceMs);
      await eventually(async () => {
        const rows = await backupsOf(s.id);
        return rows.length === expected && rows.every((r) => r.status === 'completed' || r.status === 'expired');
      });
      // Both schedulers keep looking: still exactly `expected`.
      await new Promise((r) => setTimeout(r, 300));
      expect(await backupsOf(s.id)).toHaveLength(expected);
    };
    await slot(HOUR, 1);
    await slot(HOUR, 2);
    // Five slots pass while nothing runs a scheduler tick in between: one backup, not five.
    await slot(5 * HOUR, 3);
    const after = (await a.get(`/v1/backup-schedules/${s.id}`)).body;
    expect(after.last_run_at).toBe('2026-11-22T17:00:00.000Z');
    expect(Date.parse(after.next_run_at)).toBe(clock.now().getTime() + HOUR - (clock.now().getTime() % HOUR));

    // retain 2: the oldest of the three expired, its archive removed, and said so.
    const rows = await eventually(async () => {
      const r = await backupsOf(s.id);
      return r.filter((x) => x.status === 'expired').length === 1 ? r : null;
    });
    expect(rows.map((r) => r.status)).toEqual(['expired', 'completed', 'completed']);
    const oldest = (await a.get(`/v1/backups/${rows[0]?.id}`)).body;
    expect(oldest).toMatchObject({ status: 'expired', trigger: 'schedule', schedule_id: s.id });
    expect(oldest.expires_at).not.toBe(null);
    expect(existsSync(path.join(a.dataDir, 'backups', `${oldest.id}.tar.gz`))).toBe(false);
    expect(existsSync(path.join(a.dataDir, 'backups', `${rows[2]?.id}.tar.gz`))).toBe(true);
    const events = (await a.get(`/v1/events?type=backup.expired&resource_id=${oldest.id}`)).body.data;
    expect(events).toHaveLength(1);

    // A lower retain expires the surplus at once, without waiting for the next backup.
    const lowered = await a.request('PATCH', `/v1/backup-schedules/${s.id}`, { body: { retain: 1 } });
    expect(lowered.status).toBe(200);
    expect((await backupsOf(s.id)).map((r) => r.status)).toEqual(['expired', 'expired', 'completed']);
    expect(existsSync(path.join(a.dataDir, 'backups', `${rows[1]?.id}.tar.gz`))).toBe(false);
  });
});
