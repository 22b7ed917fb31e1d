import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { drainRuns } from '../../src/provisioning/cron/runner.js';

describe('a freeze’s wait for the cron runs begun before it', async () => {
  const state = await mkdtemp(path.join(tmpdir(), 'berth-cron-drain-'));
  afterAll(() => rm(state, { recursive: true, force: true }));
  const job = 'crn_01jd00000000000000000000aa';

  /**
   * A run as `berth cron-run` holds it: the job's runs lock, shared, until it ends. As a runner
   * (its arguments `cron-run STATE JOB_ID`) it ends at SIGTERM; otherwise it is no runner, and
   * lives on.
   */
  async function aRun(runner = false) {
    await mkdir(path.join(state, 'locks'), { recursive: true });
    const lock = path.join(state, 'locks', `${job}.runs`);
    const hold = runner
      ? [process.execPath, '-e', "process.on('SIGTERM', () => process.exit(0)); console.log('held'); setInterval(() => {}, 1000)"]
      : ['sh', '-c', 'echo held; exec sleep 60'];
    const run = spawn('flock', ['-s', lock, ...hold, ...(runner ? ['cron-run', state, job] : [])], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await once(run.stdout, 'data');
    return {
      end: () => {
        try {
          process.kill(-(run.pid as number), 'SIGKILL');
        } catch (err) {
          // A runner sent SIGTERM by the drain may be gone already, flock with it.
          if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
        }
      },
    };
  }

  it('is over at once without a run, waits for one that ends, stops a runner past its bound, and fails naming the job when nothing ends it', async () => {
    await drainRuns(state, [job], 1, 1);

    const long = await aRun();
    try {
      const started = Date.now();
      await expect(drainRuns(state, [job], 1, 1)).rejects.toThrow(
        `a run of cron job ${job} begun before the freeze still runs after 2 s`,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    } finally {
      long.end();
    }

    // A runner still running past the bound is sent SIGTERM, and the wait is over once it ends.
    const runner = await aRun(true);
    try {
      await drainRuns(state, [job], 1, 30);
    } finally {
      runner.end();
    }

    // One that ends within the bound: the wait is over then.
    const ending = await aRun();
    const drain = drainRuns(state, [job], 60);
    ending.end();
    await drain;
  });
});
