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

  /** A run as `berth cron-run` holds it: the job's runs lock, shared, until it ends. */
  async function aRun() {
    await mkdir(path.join(state, 'locks'), { recursive: true });
    const lock = path.join(state, 'locks', `${job}.runs`);
    const run = spawn('flock', ['-s', lock, 'sh', '-c', 'echo held; exec sleep 60'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await once(run.stdout, 'data');
    return { end: () => process.kill(-(run.pid as number), 'SIGKILL') };
  }

  it('is over at once without a run, waits for one that ends, and fails past its bound naming the job', async () => {
    await drainRuns(state, [job], 1);

    const long = await aRun();
    try {
      const started = Date.now();
      await expect(drainRuns(state, [job], 1)).rejects.toThrow(
        `a run of cron job ${job} begun before the freeze still runs after 1 s`,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      long.end();
    }

    // One that ends within the bound: the wait is over then.
    const ending = await aRun();
    const drain = drainRuns(state, [job], 60);
    ending.end();
    await drain;
  });
});
