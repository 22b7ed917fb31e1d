import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSchedule, commandErrors } from '../../src/modules/cron/rules.js';
import { renderCronFile, renderJobFile, type CronAccountSpec } from '../../src/provisioning/render/cron.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/cron', name), 'utf8');
const job = (id: string, fields: string, enabled = true) => ({
  id,
  fields,
  command: { argv: ['php', 'artisan', 'schedule:run'] },
  timeout_s: 600,
  overlap: 'skip' as const,
  enabled,
});
const spec: CronAccountSpec = {
  account_id: 'acc_01jd3x9v6ef8tb2q4w5n7k8m9p',
  username: 'alice',
  user: 'berth-alice',
  home: '/srv/berth/accounts/acc_01jd3x9v6ef8tb2q4w5n7k8m9p',
  suspended: false,
  jobs: [
    job('cjb_01jd3x9v6ef8tb2q4w5n7k8m9p', '*/15 * * * *'),
    job('cjb_01jd3x9v6ef8tb2q4w5n7k8m9q', '0 3 * * MON-FRI'),
    job('cjb_01jd3x9v6ef8tb2q4w5n7k8m9r', '0 0 * * *', false),
  ],
};
const RUNNER = '/srv/berth/cron/run';

describe('cron files', () => {
  it("render one file per account: each enabled job's schedule, root, the runner and the job's id (golden file)", () => {
    expect(renderCronFile(spec, RUNNER)).toBe(fixture('berth-alice'));
  });

  it('a suspended account keeps its file without a job line', () => {
    const text = renderCronFile({ ...spec, suspended: true }, RUNNER);
    expect(text).not.toMatch(/ root /);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('refuse a field, id or runner that could add a line or a command', () => {
    expect(() =>
      renderCronFile({ ...spec, jobs: [job('cjb_01jd3x9v6ef8tb2q4w5n7k8m9p', '* * * * *\n* * * * * root sh')] }, RUNNER),
    ).toThrow(/unsafe cron line/);
    expect(() => renderCronFile({ ...spec, jobs: [job('cjb_x; rm -rf /', '* * * * *')] }, RUNNER)).toThrow(/unsafe cron line/);
    expect(() => renderCronFile(spec, '/srv/run me')).toThrow(/unsafe cron runner/);
  });

  it("the runner's job file holds the command, the user and the home, never on a cron line", () => {
    const file = JSON.parse(renderJobFile(spec, spec.jobs[0]!));
    expect(file).toEqual({
      id: 'cjb_01jd3x9v6ef8tb2q4w5n7k8m9p',
      account_id: spec.account_id,
      user: 'berth-alice',
      home: spec.home,
      suspended: false,
      command: { argv: ['php', 'artisan', 'schedule:run'] },
      timeout_s: 600,
      overlap: 'skip',
    });
    // A freeze says so in the file before it stops a run (its reason depends on it).
    expect(JSON.parse(renderJobFile({ ...spec, suspended: true, frozen: true }, spec.jobs[0]!))).toMatchObject({
      suspended: true,
      frozen: true,
    });
  });
});

describe('cron job rules', () => {
  const codes = (schedule: string, min = 5) => checkSchedule(schedule, min).errors.map((e) => e.code);

  it('take five fields and the named schedules; refuse @reboot, seconds and nonsense as invalid_format', () => {
    expect(codes('*/15 * * * *')).toEqual([]);
    expect(codes('@daily')).toEqual([]);
    expect(codes('@reboot')).toEqual(['invalid_format']);
    expect(codes('0 */5 * * * *')).toEqual(['invalid_format']);
    expect(codes('61 * * * *')).toEqual(['invalid_format']);
    expect(codes('0 0 31 2 *')).toEqual(['invalid_format']);
  });

  it("count the plan's interval over the expanded minutes, the wrap across the hour included", () => {
    expect(codes('*/4 * * * *')).toEqual(['schedule_too_frequent']);
    // 7 minutes apart within the hour, but :56 and the next hour's :00 are 4 minutes apart.
    expect(codes('*/7 * * * *', 4)).toEqual([]);
    expect(codes('*/7 * * * *', 5)).toEqual(['schedule_too_frequent']);
    // 50 minutes apart within the hour, but :50 and the next hour's :00 are 10 minutes apart.
    expect(codes('0,50 * * * *', 15)).toEqual(['schedule_too_frequent']);
    expect(codes('0,50 * * * *', 10)).toEqual([]);
    expect(checkSchedule('* * * * *', 5).errors[0]?.detail).toMatch(/1 minute/);
  });

  it('refuse a newline in a shell line', () => {
    expect(commandErrors({ shell: 'echo a\nrm -rf ~' })).toEqual([expect.objectContaining({ pointer: '/command/shell' })]);
    expect(commandErrors({ shell: 'echo a\rb' })).toEqual([expect.objectContaining({ code: 'invalid_value' })]);
    expect(commandErrors({ argv: ['echo', 'two\nlines are fine as one argument'] })).toEqual([]);
    expect(commandErrors({ shell: 'cd app && php artisan schedule:run >> log 2>&1' })).toEqual([]);
  });
});
