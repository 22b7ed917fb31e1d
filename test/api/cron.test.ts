import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan, createToken, world } from '../helpers/fixtures.js';

let t: TestApp;
let w: Awaited<ReturnType<typeof world>>;

beforeAll(async () => {
  t = await createTestApp({ env: { BERTH_CRON_COLLECT_MS: '200' } });
  w = await world(t);
});
afterAll(() => t.close());

const jobsOf = (accountId: string) => `/v1/accounts/${accountId}/cron-jobs`;
const create = (accountId: string, body: Record<string, unknown>, token?: string) => t.post(jobsOf(accountId), body, token);
const cronFile = (username: string) => path.join(t.dataDir, 'rendered', 'cron.d', `berth-${username}`);
const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};
const inSync = (accountId: string, id: string) =>
  eventually(async () => {
    const r = await t.get(`${jobsOf(accountId)}/${id}`);
    return r.body.sync_state === 'in_sync' && r.body;
  });
const job = { name: 'Laravel scheduler', schedule: '*/15 * * * *', command: { argv: ['php', 'artisan', 'schedule:run'] } };

describe('cron jobs', () => {
  it("are created in the account's cron file, each line the runner and the job's id; the command only in a root-only job file", async () => {
    const r = await create(w.accountA.id, job, w.tokenA);
    expect(r.status, r.text).toBe(201);
    expect(r.headers.location).toBe(`${jobsOf(w.accountA.id)}/${r.body.id}`);
    expect(r.headers.etag).toBe('"1"');
    expect(r.body).toMatchObject({
      account_id: w.accountA.id,
      timeout_s: 3600,
      overlap: 'skip',
      enabled: true,
      notify: { on: 'never', email: null },
      last_run: null,
      timezone: expect.any(String),
    });
    const next = new Date(r.body.next_run_at);
    expect(next.getTime()).toBeGreaterThan(t.clock.now().getTime());
    expect(next.getUTCMinutes() % 15).toBe(0);
    await inSync(w.accountA.id, r.body.id);

    const line = `*/15 * * * * root ${path.join(t.dataDir, 'cron', 'run')} ${r.body.id}`;
    expect(read(cronFile(w.accountA.username)).split('\n')).toContain(line);
    expect(read(cronFile(w.accountA.username))).not.toContain('artisan');
    const jobFile = path.join(t.dataDir, 'cron', 'jobs', `${r.body.id}.json`);
    expect(JSON.parse(read(jobFile)).command).toEqual(job.command);
    expect(statSync(jobFile).mode & 0o777).toBe(0o600);
    expect(statSync(cronFile(w.accountA.username)).mode & 0o777).toBe(0o600);

    const events = await t.get(`/v1/events?type=cron_job.created&account_id=${w.accountA.id}`);
    expect(events.body.data.map((e: { resource: { id: string } }) => e.resource.id)).toContain(r.body.id);
  });

  it('refuse a bad schedule, a too frequent one, NUL and a newline in a shell line with field errors, creating nothing', async () => {
    const before = (await t.get(jobsOf(w.accountA.id))).body.data.length;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ schedule: '@reboot' }, '/schedule', 'invalid_format'],
      [{ schedule: '*/5 * * * * *' }, '/schedule', 'invalid_format'],
      [{ schedule: '*/4 * * * *' }, '/schedule', 'schedule_too_frequent'],
      [{ command: { shell: 'echo a\necho b' } }, '/command/shell', 'invalid_value'],
      [{ command: { argv: ['echo', 'a\u0000'] } }, '/command/argv/1', 'invalid_character'],
    ];
    for (const [change, pointer, code] of cases) {
      const r = await create(w.accountA.id, { ...job, ...change }, w.tokenA);
      expect(r.status, r.text).toBe(422);
      expect(r.body.errors).toEqual([expect.objectContaining({ pointer, code })]);
    }
    for (const bad of [
      { ...job, command: { argv: [] } },
      { ...job, command: { argv: ['x'], shell: 'y' } },
      { ...job, timeout_s: 0 },
      { ...job, overlap: 'queue' },
      { ...job, name: 'two\nlines' },
      { ...job, command: { argv: Array.from({ length: 65 }, () => 'x') } },
      { ...job, command: { argv: ['echo', 'x'.repeat(4097)] } },
      { ...job, command: { shell: 'x'.repeat(4097) } },
      { ...job, timeout_s: 86401 },
    ])
      expect((await create(w.accountA.id, bad, w.tokenA)).status).toBe(422);
    expect((await t.get(jobsOf(w.accountA.id))).body.data).toHaveLength(before);
  });

  it("count the plan's max_cron_jobs and its cron_min_interval_minutes", async () => {
    const plan = await createPlan(t, undefined, { max_cron_jobs: 1, cron_min_interval_minutes: 15 });
    expect(plan).toMatchObject({ max_cron_jobs: 1, cron_min_interval_minutes: 15 });
    const account = await createAccount(t, plan.id);
    // 50 minutes apart within the hour, 10 across it.
    const often = await create(account.id, { ...job, schedule: '0,50 * * * *' });
    expect(often.body.errors?.[0]?.code).toBe('schedule_too_frequent');
    expect((await create(account.id, job)).status).toBe(201);
    const second = await create(account.id, { ...job, name: 'second' });
    expect(second.status).toBe(403);
    expect(second.body.code).toBe('quota_exceeded');
    // Counted in the usage: a plan allowing none is refused for the account, which keeps its plan.
    expect((await t.get(`/v1/accounts/${account.id}/usage`)).body.usage.cron_jobs).toBe(1);
    const none = await createPlan(t, undefined, { max_cron_jobs: 0 });
    const downgrade = await t.request('PATCH', `/v1/accounts/${account.id}`, { body: { plan_id: none.id } });
    expect(downgrade.status).toBe(403);
    expect(downgrade.body.exceeded).toEqual([{ limit: 'max_cron_jobs', allowed: 0, usage: 1 }]);
  });

  it("are out of another reseller's reach (404) and need the cron scope (403)", async () => {
    const made = (await create(w.accountA.id, { ...job, name: 'reach' }, w.tokenA)).body;
    const item = `${jobsOf(w.accountA.id)}/${made.id}`;
    for (const [method, url] of [
      ['GET', jobsOf(w.accountA.id)],
      ['GET', item],
      ['PATCH', item],
      ['DELETE', item],
      ['POST', `${item}/run`],
      ['GET', `${item}/runs`],
    ] as const) {
      const r = await t.request(method, url, { token: w.tokenB, body: method === 'PATCH' ? { enabled: false } : undefined });
      expect(r.status, `${method} ${url}`).toBe(404);
    }
    // The job under another account's path is not found either.
    expect((await t.get(`${jobsOf(w.accountB.id)}/${made.id}`)).status).toBe(404);
    const noCron = await createToken(t, { principal: { kind: 'reseller', id: w.resellerA.id }, scopes: ['accounts:read'] });
    expect((await t.get(item, noCron)).body.code).toBe('insufficient_scope');
    expect((await t.get(item, w.tokenAccountA)).status).toBe(200);
  });

  it('change by merge patch (a command replaced whole, If-Match honoured); disabling takes the line out', async () => {
    const made = (await create(w.accountA.id, { ...job, name: 'patch me' }, w.tokenA)).body;
    const item = `${jobsOf(w.accountA.id)}/${made.id}`;
    const stale = await t.request('PATCH', item, { body: { timeout_s: 10 }, headers: { 'if-match': '"9"' } });
    expect(stale.status).toBe(412);
    const r = await t.request('PATCH', item, {
      body: { command: { shell: 'echo hi' }, enabled: false },
      headers: { 'if-match': '"1"' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ command: { shell: 'echo hi' }, enabled: false, next_run_at: null, version: 2 });
    await inSync(w.accountA.id, made.id);
    expect(read(cronFile(w.accountA.username))).not.toContain(made.id);
    const tooOften = await t.request('PATCH', item, { body: { schedule: '* * * * *' } });
    expect(tooOften.body.errors?.[0]?.code).toBe('schedule_too_frequent');
  });

  it('a manual run where no cron driver is configured is skipped with the reason, and shows as the last run', async () => {
    const made = (await create(w.accountA.id, { ...job, name: 'run me' }, w.tokenA)).body;
    const item = `${jobsOf(w.accountA.id)}/${made.id}`;
    const run = await t.post(`${item}/run`, undefined, w.tokenA);
    expect(run.status, run.text).toBe(202);
    expect(run.body).toMatchObject({ cron_job_id: made.id, trigger: 'manual', status: 'skipped' });
    const runs = await t.get(`${item}/runs`);
    expect(runs.body.data).toEqual([
      expect.objectContaining({ id: run.body.id, status: 'skipped', reason: expect.stringMatching(/no cron driver/) }),
    ]);
    expect((await t.get(item)).body.last_run).toMatchObject({ id: run.body.id, status: 'skipped' });
  });

  it("collects what the server's runner recorded: exit code, output, and cron_job.run_failed", async () => {
    const made = (await create(w.accountA.id, { ...job, name: 'fails' }, w.tokenA)).body;
    const id = newId('crn');
    const dir = path.join(t.dataDir, 'cron', 'runs');
    mkdirSync(dir, { recursive: true });
    const record = {
      id,
      job_id: made.id,
      trigger: 'schedule',
      status: 'failed',
      started_at: new Date(Date.now() - 2000).toISOString(),
      finished_at: new Date().toISOString(),
      exit_code: 3,
      output_tail: 'no such table\n',
      reason: null,
    };
    writeFileSync(path.join(dir, `${id}.json`), JSON.stringify(record));
    const runs = await eventually(async () => {
      const r = await t.get(`${jobsOf(w.accountA.id)}/${made.id}/runs`);
      return r.body.data.length > 0 && r.body.data;
    });
    expect(runs[0]).toMatchObject({ id, status: 'failed', exit_code: 3, output_tail: 'no such table\n', trigger: 'schedule' });
    // Stored once, then forgotten by the server.
    await eventually(async () => !read(path.join(dir, `${id}.json`)));
    const events = await t.get(`/v1/events?type=cron_job.run_failed&account_id=${w.accountA.id}`);
    expect(events.body.data[0]).toMatchObject({ resource: { id: made.id }, data: { id, exit_code: 3 } });
  });

  it("a suspended account's file has no job line; deletion takes the job and its runs away", async () => {
    const account = await createAccount(t, w.plan.id, w.tokenA);
    const made = (await create(account.id, job, w.tokenA)).body;
    await inSync(account.id, made.id);
    expect(read(cronFile(account.username))).toContain(made.id);
    expect((await t.post(`/v1/accounts/${account.id}/suspend`, { reason: 'unpaid' })).status).toBe(200);
    await eventually(async () => !read(cronFile(account.username)).includes(made.id));
    expect((await t.post(`/v1/accounts/${account.id}/unsuspend`, {})).status).toBe(200);
    await eventually(async () => read(cronFile(account.username)).includes(made.id));

    const item = `${jobsOf(account.id)}/${made.id}`;
    expect((await t.request('DELETE', item, { token: w.tokenA })).status).toBe(204);
    expect((await t.get(item)).status).toBe(404);
    // Its last job gone, the account has no cron file, then (removed after it, so that cron never
    // starts a job whose file is gone) no job file.
    const jobSpec = path.join(t.dataDir, 'cron', 'jobs', `${made.id}.json`);
    await eventually(async () => !read(cronFile(account.username)) && !read(jobSpec));
    const events = await t.get(`/v1/events?type=cron_job.deleted&account_id=${account.id}`);
    expect(events.body.data).toHaveLength(1);
  });

  it('go into backups and come back with a restore: the same id, schedule and command, in the cron file again', async () => {
    const account = await createAccount(t, w.plan.id, w.tokenA);
    const made = (await create(account.id, { ...job, schedule: '30 2 * * *', overlap: 'allow' }, w.tokenA)).body;
    const backup = await t.post('/v1/backups', { account_id: account.id, include: ['cron_jobs'] }, w.tokenA);
    expect(backup.status, backup.text).toBe(202);
    const done = await eventually(async () => {
      const b = (await t.get(`/v1/backups/${backup.body.id}`)).body;
      return ['completed', 'failed'].includes(b.status) && b;
    });
    expect(done).toMatchObject({ status: 'completed', contents: { cron_jobs: 1 } });
    expect((await t.request('DELETE', `${jobsOf(account.id)}/${made.id}`)).status).toBe(204);
    await eventually(async () => !read(cronFile(account.username)));

    const restore = await t.post(`/v1/backups/${backup.body.id}/restore`, {}, w.tokenA);
    expect(restore.status, restore.text).toBe(202);
    await eventually(async () => (await t.get(`/v1/operations/${restore.body.operation.id}`)).body.status === 'succeeded');
    const back = (await t.get(`${jobsOf(account.id)}/${made.id}`)).body;
    expect(back).toMatchObject({ schedule: '30 2 * * *', command: job.command, overlap: 'allow', enabled: true });
    await eventually(async () => read(cronFile(account.username)).includes(`30 2 * * * root`));
  });
});
