import { describe, expect, it } from 'vitest';
import { minimumIntervalMinutes, nextRun, parseSchedule, ScheduleRefused } from '../../src/lib/cron-schedule.js';

const interval = (text: string) => minimumIntervalMinutes(parseSchedule(text));
const refused = (text: string) => {
  try {
    parseSchedule(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ScheduleRefused);
    return (err as ScheduleRefused).message;
  }
  throw new Error(`${JSON.stringify(text)} was accepted`);
};

describe('cron schedules', () => {
  it('take five fields, names of months and days among them', () => {
    expect(parseSchedule('*/15 9-17 * JAN-MAR MON-FRI').fields).toBe('*/15 9-17 * JAN-MAR MON-FRI');
    expect(parseSchedule('  0 3 * * 7 ').fields).toBe('0 3 * * 7');
  });

  it('take the five named schedules, as the fields they stand for', () => {
    expect(parseSchedule('@hourly').fields).toBe('0 * * * *');
    expect(parseSchedule('@daily').fields).toBe('0 0 * * *');
    expect(parseSchedule('@weekly').fields).toBe('0 0 * * 0');
    expect(parseSchedule('@monthly').fields).toBe('0 0 1 * *');
    expect(parseSchedule('@yearly').fields).toBe('0 0 1 1 *');
  });

  it('refuse @reboot, other names and seconds', () => {
    expect(refused('@reboot')).toMatch(/@reboot/);
    expect(refused('@fortnightly')).toMatch(/not a schedule name/);
    expect(refused('0 0 0 * * *')).toMatch(/seconds/);
  });

  it('refuse the wrong number of fields, values out of range and what cannot be read', () => {
    expect(refused('* * * *')).toMatch(/five fields/);
    expect(refused('61 * * * *')).toMatch(/not a cron schedule/);
    expect(refused('* 24 * * *')).toMatch(/not a cron schedule/);
    expect(refused('*/x * * * *')).toMatch(/not a cron schedule/);
    expect(refused('')).toMatch(/five fields/);
  });

  it('refuse a newline, a NUL or any control character, and more than 200 characters', () => {
    expect(refused('* * * * *\n* * * * * root id')).toMatch(/control character/);
    expect(refused('* * * * *\u0000')).toMatch(/control character/);
    expect(refused(`${'0,'.repeat(100)}0 * * * *`)).toMatch(/200 characters/);
  });

  it('refuse a date that never comes', () => {
    // Four years of days are checked: the 29th of February is found, the 30th never.
    expect(refused('0 0 30 2 *')).toMatch(/never fires/);
    expect(refused('0 0 31 4 *')).toMatch(/never fires/);
    expect(refused('0 0 30,31 2 *')).toMatch(/never fires/);
    // February 29th comes once in four years.
    expect(parseSchedule('0 0 29 2 *').fields).toBe('0 0 29 2 *');
  });

  it('count the shortest interval over the expanded minutes, with the wrap across the hour', () => {
    expect(interval('*/7 * * * *')).toBe(4); // :56, then the next hour's :00
    expect(interval('*/5 * * * *')).toBe(5);
    expect(interval('*/10 * * * *')).toBe(10);
    expect(interval('0,59 * * * *')).toBe(1); // :59, then :00
    expect(interval('* * * * *')).toBe(1);
    expect(interval('@hourly')).toBe(60);
    expect(interval('*/20 */2 * * *')).toBe(20);
    expect(interval('50 */2 * * *')).toBe(120);
  });

  it('and across the day, only between days it fires on', () => {
    expect(interval('@daily')).toBe(1440);
    expect(interval('0,59 0,23 * * *')).toBe(1); // 23:59, then 00:00
    expect(interval('0 0,23 * * *')).toBe(60); // 23:00, then 00:00
    // The 31st, then the 1st of the next month: the next day.
    expect(interval('0,59 0,23 1,31 * *')).toBe(1);
    // The 1st and the 15th are never next to each other: within the day, 59 minutes.
    expect(interval('0,59 0,23 1,15 * *')).toBe(59);
    // Either day field, as cron has it: Sundays and the 1st; Saturday the 31st, then Sunday the 1st.
    expect(interval('59 23 1 * 0')).toBe(1440);
    expect(interval('@weekly')).toBe(7 * 1440);
  });

  it('say when a schedule fires next, in the time zone given', () => {
    const s = parseSchedule('*/7 * * * *');
    expect(nextRun(s, new Date('2026-01-01T00:57:00Z'), 'UTC')?.toISOString()).toBe('2026-01-01T01:00:00.000Z');
    const daily = parseSchedule('30 2 * * *');
    expect(nextRun(daily, new Date('2026-01-01T12:00:00Z'), 'Europe/Berlin')?.toISOString()).toBe('2026-01-02T01:30:00.000Z');
  });
});
