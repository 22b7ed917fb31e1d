import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountHome, loginHome } from '../../src/layout.js';
import { processStat } from '../../src/lib/process-start.js';
import { CronFilesDriver } from '../../src/provisioning/cron/driver.js';
import { STOPPED_RUN, TERMINATED_RUN } from '../../src/provisioning/cron/runner.js';
import { cronDriver } from '../../src/provisioning/drivers/index.js';
import { eventually, type TestApp } from '../helpers/app.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { daemonApp, daemonEnv, inbox, NO_DAEMONS } from './daemons.js';

/**
 * Cron jobs on Debian's cron: the account's file in /etc/cron.d, Berth's runner running each job
 * as the account's Unix user (made by the PHP-FPM driver) under its lock and timeout, the runs
 * collected into the API and announced to webhooks.
 */
const ready = daemonEnv?.BERTH_DRIVER_CRON === 'cron' && daemonEnv.BERTH_DRIVER_PHP === 'php-fpm';

describe.skipIf(!ready)(`cron jobs (${ready ? 'Debian cron' : `skipped: ${NO_DAEMONS} with cron and PHP-FPM`})`, () => {
  let t: TestApp;
  let rx: Receiver;
  let account: { id: string; username: string };
  beforeAll(async () => {
    t = await daemonApp({ BERTH_CRON_COLLECT_MS: '300', BERTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', BERTH_WEBHOOK_RELAY_MS: '50' });
    rx = await startReceiver();
    expect((await t.post('/v1/webhooks', { url: rx.url('/cron'), event_types: ['cron_job.run_failed'] })).status).toBe(201);
    // Every minute allowed: the scheduled run below fires each minute.
    account = await createAccount(t, (await createPlan(t, undefined, { cron_min_interval_minutes: 1 })).id);
  });
  afterAll(async () => {
    // Deleting the jobs takes the account's file out of the system's /etc/cron.d.
    for (const job of (await t.get(jobs())).body?.data ?? []) await t.request('DELETE', `${jobs()}/${job.id}`);
    await eventually(async () => !existsSync(path.join('/etc/cron.d', `berth-${account.username}`)));
    await rx?.close();
    await t?.close();
  });

  const jobs = () => `/v1/accounts/${account.id}/cron-jobs`;
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  async function job(body: Record<string, unknown>): Promise<string> {
    const r = await t.post(jobs(), { name: 'job', schedule: '@daily', ...body });
    expect(r.status, r.text).toBe(201);
    await eventually(async () => (await t.get(`${jobs()}/${r.body.id}`)).body.sync_state === 'in_sync');
    return r.body.id;
  }
  const run = async (id: string) => {
    const r = await t.post(`${jobs()}/${id}/run`);
    expect(r.status, r.text).toBe(202);
    return r.body.id as string;
  };
  const finished = (id: string, runId: string) =>
    eventually(async () => {
      const r = (await t.get(`${jobs()}/${id}/runs`)).body.data.find((x: { id: string }) => x.id === runId);
      return r?.status !== 'running' && r;
    });

  it("a manual run runs as the account's user in its home, and its file is the user's", async () => {
    const id = await job({ command: { shell: 'id -un > ran.txt; date -u +%s >> ran.txt' } });
    const r = await finished(id, await run(id));
    expect(r).toMatchObject({ status: 'succeeded', exit_code: 0, trigger: 'manual' });
    const file = path.join(loginHome(accountHome(t.dataDir, account.id)), 'ran.txt');
    const [user, at] = read(file).trim().split('\n');
    expect(user).toBe(`berth-${account.username}`);
    expect(Math.abs(Number(at) - Date.now() / 1000)).toBeLessThan(120);
    expect(statSync(file).uid).not.toBe(0);
  });

  it(
    'a job on `* * * * *` runs by itself at one of the next minutes and its run shows in the API',
    { timeout: 200_000 },
    async () => {
      const id = await job({ schedule: '* * * * *', command: { argv: ['echo', 'tick'] } });
      expect(read(path.join('/etc/cron.d', `berth-${account.username}`))).toContain(id);
      // cron rereads its files at a minute's start and may run that minute's jobs before it has
      // read a file written just then: the first run can come at the second minute after, and on a
      // loaded machine the runner then takes seconds to start (once 70 s was not enough in CI).
      const r = await eventually(async () => {
        const runs = (await t.get(`${jobs()}/${id}/runs`)).body.data;
        return runs.find((x: { status: string }) => x.status === 'succeeded');
      }, 150_000);
      expect(r).toMatchObject({ trigger: 'schedule', exit_code: 0, output_tail: 'tick\n' });
      expect((await t.request('PATCH', `${jobs()}/${id}`, { body: { enabled: false } })).status).toBe(200);
    },
  );

  it('a run past its timeout ends timed_out', async () => {
    const id = await job({ command: { argv: ['sleep', '60'] }, timeout_s: 1 });
    expect(await finished(id, await run(id))).toMatchObject({ status: 'timed_out' });
  });

  it('two runs at once with overlap: skip give one skipped', async () => {
    const id = await job({ command: { argv: ['sleep', '3'] }, overlap: 'skip' });
    const [a, b] = await Promise.all([run(id), run(id)]);
    const statuses = [(await finished(id, a)).status, (await finished(id, b)).status].sort();
    expect(statuses).toEqual(['skipped', 'succeeded']);
  });

  it('a freeze for a move is applied once a run begun before it has ended; a run after it is skipped', async () => {
    const id = await job({ command: { shell: 'touch frozen-run.txt; sleep 2; echo ended > frozen-run.txt' }, timeout_s: 30 });
    const home = loginHome(accountHome(t.dataDir, account.id));
    await run(id);
    // Its command started (the run is `running` in the API from the request on, before its runner starts).
    await eventually(async () => existsSync(path.join(home, 'frozen-run.txt')));
    // The account's unit as a freeze hands it to the server's driver (the app's own, on the same files).
    const listed = (await t.get(`${jobs()}/${id}`)).body;
    const spec = {
      ...{ account_id: account.id, username: account.username, user: `berth-${account.username}`, home },
      jobs: [{ id, fields: '0 0 * * *', command: listed.command, timeout_s: 30, overlap: listed.overlap, enabled: true }],
    };
    const driver = cronDriver(t.dataDir, daemonEnv!.BERTH_CRON_DIR as string);
    try {
      await driver.applyAccount({ ...spec, suspended: true, frozen: true });
      expect(read(path.join(home, 'frozen-run.txt'))).toBe('ended\n');
      expect(await finished(id, await run(id))).toMatchObject({ status: 'skipped', reason: 'the account is suspended' });
    } finally {
      await driver.applyAccount({ ...spec, suspended: false });
    }
  });

  it('a freeze stops a run that outlives its wait, and what runs left behind: the run fails, saying why, and the freeze is applied', async () => {
    const home = loginHome(accountHome(t.dataDir, account.id));
    // A run that leaves a process behind in a session of its own, and ends.
    const leaves = await job({
      command: { shell: "setsid sh -c 'echo $$ > left.pid; exec sleep 300' < /dev/null > /dev/null 2>&1 &" },
    });
    expect(await finished(leaves, await run(leaves))).toMatchObject({ status: 'succeeded' });
    const left = (await eventually(async () => Number(readFileSync(path.join(home, 'left.pid'), 'utf8')) || false)) as number;
    expect(await processStat(left)).not.toBeNull();
    const id = await job({ command: { shell: 'touch long-run.txt; exec sleep 300' }, timeout_s: 600 });
    const runId = await run(id);
    await eventually(async () => existsSync(path.join(home, 'long-run.txt')));
    const listed = (await t.get(`${jobs()}/${id}`)).body;
    const spec = {
      ...{ account_id: account.id, username: account.username, user: `berth-${account.username}`, home },
      jobs: [{ id, fields: '0 0 * * *', command: listed.command, timeout_s: 600, overlap: listed.overlap, enabled: true }],
    };
    // The app's driver on the same files, with a wait of 1 s instead of a minute.
    const driver = new CronFilesDriver('cron', {
      cronDir: daemonEnv!.BERTH_CRON_DIR as string,
      stateDir: path.resolve(t.dataDir, 'cron'),
      runs: true,
      freezeDrainS: 1,
    });
    try {
      const started = Date.now();
      await driver.applyAccount({ ...spec, suspended: true, frozen: true });
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(await finished(id, runId)).toMatchObject({ status: 'failed', reason: STOPPED_RUN });
      // What an earlier run left running (outside its process group) is ended too (a zombie
      // not yet reaped by init counts as ended).
      expect(await processStat(left)).toBeNull();
    } finally {
      await driver.applyAccount({ ...spec, suspended: false });
    }
  });

  it('a run whose runner gets SIGTERM from anyone but a freeze fails, saying so without naming a freeze', async () => {
    const home = loginHome(accountHome(t.dataDir, account.id));
    const id = await job({ command: { shell: 'touch signalled-run.txt; exec sleep 300' }, timeout_s: 600 });
    const runId = await run(id);
    await eventually(async () => existsSync(path.join(home, 'signalled-run.txt')));
    // The runner: `berth cron-run STATE JOB_ID …`, as root.
    const runners = readdirSync('/proc').filter((pid) => {
      const argv = read(`/proc/${pid}/cmdline`).split('\0');
      return /^\d+$/.test(pid) && argv[argv.indexOf('cron-run') + 2] === id;
    });
    expect(runners).toHaveLength(1);
    process.kill(Number(runners[0]), 'SIGTERM');
    expect(await finished(id, runId)).toMatchObject({ status: 'failed', reason: TERMINATED_RUN });
  });

  it('a failing run keeps its exit code and output, reaches the webhook, and is mailed through the mail host', async () => {
    // A mailbox on the daemons' Dovecot receives the notification.
    const domain = `cron-${Date.now().toString(36)}.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name: domain, mail_enabled: true })).status).toBe(201);
    const box = await t.post('/v1/emails', { address: `ops@${domain}`, password: 'a-long-password-123', quota_mb: 10 });
    expect(box.status, box.text).toBe(201);
    await eventually(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync');

    const id = await job({
      name: 'import',
      command: { shell: 'echo "no such table" >&2; exit 3' },
      notify: { on: 'failure', email: `ops@${domain}` },
    });
    const runId = await run(id);
    expect(await finished(id, runId)).toMatchObject({ status: 'failed', exit_code: 3, output_tail: 'no such table\n' });
    const delivered = await eventually(async () => rx.received.find((r) => r.body.includes(runId)));
    expect(JSON.parse(delivered.body)).toMatchObject({ type: 'cron_job.run_failed', data: { id: runId, exit_code: 3 } });

    const mailed = await eventually(
      async () =>
        (await inbox(`ops@${domain}`, 'a-long-password-123'))?.find((m) => m.subject.includes('import'))?.source.toString('utf8'),
      30_000,
    );
    expect(mailed).toContain('failed, exit code 3');
    expect(mailed).toContain('no such table');
  });
});
