import { spawn } from 'node:child_process';
import { mkdir, open, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isId, newId } from '../../lib/ids.js';
import { runCommand } from '../../lib/run-command.js';
import type { CronJobFile, CronRunRecord } from '../render/cron.js';

/** The last bytes of a run's output that are kept. */
const OUTPUT_TAIL_BYTES = 64 * 1024;
/** How long a job has after SIGTERM at its timeout before SIGKILL. */
const KILL_GRACE_MS = 5000;
/** Why a run whose runner was sent SIGTERM failed: a freeze does that to a run that outlives its wait (drainRuns). */
export const STOPPED_RUN = 'stopped: its runner was asked to end, as a move’s freeze does with a run that outlives its wait';
/** The same, when the job's file says no freeze: the server shutting down, or its administrator. */
export const TERMINATED_RUN =
  'stopped: its runner was sent SIGTERM, not by a move’s freeze (the server shutting down, or its administrator)';
/** What `flock -n` exits with when another run holds the lock. */
const LOCK_BUSY = 75;

export const jobFile = (state: string, jobId: string) => path.join(state, 'jobs', `${jobId}.json`);
/** The job's file as the driver last wrote it; null once the job is deleted. */
const readJob = (state: string, jobId: string) =>
  readFile(jobFile(state, jobId), 'utf8').then(
    (text) => JSON.parse(text) as CronJobFile,
    () => null,
  );
export const runsDir = (state: string) => path.join(state, 'runs');

/** Writes the run's record where the control plane (or the server's agent) collects it. */
export async function recordRun(state: string, run: CronRunRecord): Promise<void> {
  const dir = runsDir(state);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${run.id}.tmp`);
  await writeFile(tmp, JSON.stringify(run), { mode: 0o600 });
  await rename(tmp, path.join(dir, `${run.id}.json`));
}

/** The last `max` bytes written into it. */
function tail(max: number) {
  let chunks: Buffer[] = [];
  let size = 0;
  return {
    add(chunk: Buffer) {
      chunks.push(chunk);
      size += chunk.length;
      if (size > 2 * max) {
        const all = Buffer.concat(chunks);
        chunks = [all.subarray(all.length - max)];
        size = max;
      }
    },
    text() {
      const all = Buffer.concat(chunks);
      return all.subarray(Math.max(0, all.length - max)).toString('utf8');
    },
  };
}

/** The Unix user's ids and home, from the system's database of users. */
async function userIds(user: string): Promise<{ uid: number; gid: number }> {
  const [, , uid, gid] = (await runCommand('getent', ['passwd', user], 'getent passwd')).trim().split(':');
  if (!uid || !gid || Number(uid) === 0) throw new Error(`the account's user ${user} is missing or is root`);
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Locks `name` (a file of the lock directory) without waiting, or answers false: `flock -n` locks
 * the open lock file it is handed as fd 3, which this process keeps open (and the lock with it)
 * until it releases it or dies. The job itself never gets the descriptor. `shared`: any number
 * hold it at once, and an exclusive lock waits for them all.
 */
async function lock(state: string, name: string, shared = false): Promise<{ release(): Promise<void> } | null> {
  const handle = await lockFile(state, name);
  const code = await flock(handle.fd, ['-n', shared ? '-s' : '-x']);
  if (code === 0) return { release: () => handle.close() };
  await handle.close();
  if (code === LOCK_BUSY) return null;
  throw new Error(`flock failed with exit code ${code}`);
}

async function lockFile(state: string, name: string) {
  const dir = path.join(state, 'locks');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return open(path.join(dir, name), 'a', 0o600);
}

const flock = (fd: number, args: string[]) =>
  new Promise<number>((resolve, reject) => {
    const p = spawn('flock', [...args, '-E', String(LOCK_BUSY), '3'], { stdio: ['ignore', 'ignore', 'ignore', fd] });
    p.on('error', reject);
    p.on('exit', (c) => resolve(c ?? 1));
  });

/** Every run of a job holds this lock, shared, from before it reads the job's file until it ends. */
const runsLock = (jobId: string) => `${jobId}.runs`;

/**
 * Waits until no run of `jobIds` begun before this call still runs (each job's runs lock taken
 * exclusively, then let go), for at most `timeoutS` each; a run still going then is stopped (its
 * runner sent SIGTERM, which ends the command as a timeout does, recorded as failed with
 * STOPPED_RUN), as the freeze ends the account's SSH sessions, and waited for `stopS` more;
 * fails naming the job that outlived that too. Called once the job files say the account is
 * frozen: a run that starts later reads that, and one that tries while this holds the lock is
 * skipped. Failing at a long run instead would keep an account with a job longer than the wait
 * from ever moving.
 */
export async function drainRuns(
  state: string,
  jobIds: string[],
  timeoutS: number,
  stopS = KILL_GRACE_MS / 1000 + 5,
): Promise<void> {
  for (const jobId of jobIds) {
    if (await drained(state, jobId, timeoutS)) continue;
    for (const pid of await runnersOf(state, jobId)) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // ended meanwhile
      }
    }
    if (!(await drained(state, jobId, stopS)))
      throw new Error(`a run of cron job ${jobId} begun before the freeze still runs after ${timeoutS + stopS} s`);
  }
}

/** Whether the job's runs lock could be taken within `timeoutS` (and was let go at once). */
async function drained(state: string, jobId: string, timeoutS: number): Promise<boolean> {
  const handle = await lockFile(state, runsLock(jobId));
  try {
    const code = await flock(handle.fd, ['-x', '-w', String(timeoutS)]);
    if (code !== 0 && code !== LOCK_BUSY) throw new Error(`flock failed with exit code ${code}`);
    return code === 0;
  } finally {
    await handle.close();
  }
}

/** The processes running `berth cron-run STATE JOB_ID …` (cronRunCommand): the job's runners. */
async function runnersOf(state: string, jobId: string): Promise<number[]> {
  const pids: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    const at = argv.indexOf('cron-run');
    if (at >= 0 && argv[at + 1] === state && argv[at + 2] === jobId) pids.push(Number(pid));
  }
  return pids;
}

/** Runs the command as the user in its home, bounded by the timeout: its exit code, or null when it was stopped. */
function execute(job: CronJobFile, ids: { uid: number; gid: number }, out: ReturnType<typeof tail>) {
  const [file, ...args] = 'argv' in job.command ? job.command.argv : ['/bin/sh', '-c', job.command.shell];
  const env = {
    HOME: job.home,
    USER: job.user,
    LOGNAME: job.user,
    SHELL: '/bin/sh',
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
  };
  return new Promise<{ code: number | null; timedOut: boolean; stopped: boolean }>((resolve) => {
    // Its own process group (detached), so that the timeout stops what it started too. libuv
    // drops the supplementary groups with the user and group ids.
    const child = spawn(file as string, args, {
      cwd: job.home,
      env,
      uid: ids.uid,
      gid: ids.gid,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', out.add);
    child.stderr.on('data', out.add);
    let timedOut = false;
    const stop = (signal: NodeJS.Signals) => {
      try {
        process.kill(-(child.pid as number), signal);
      } catch {
        // already gone
      }
    };
    const end = () => {
      stop('SIGTERM');
      setTimeout(() => stop('SIGKILL'), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      end();
    }, job.timeout_s * 1000);
    // A freeze that waited long enough for this run stops it (drainRuns); the run is recorded.
    let stopped = false;
    const onStop = () => {
      stopped = true;
      end();
    };
    process.once('SIGTERM', onStop);
    const done = (code: number | null) => {
      clearTimeout(timer);
      process.off('SIGTERM', onStop);
      resolve({ code, timedOut, stopped });
    };
    // A command that cannot start ends as a shell's would: 127, with the reason in the output.
    child.on('error', (err) => {
      out.add(Buffer.from(`berth: cannot start ${String(file).slice(0, 200)}: ${err.message}\n`));
      done(127);
    });
    child.on('close', done);
  });
}

/**
 * `berth cron-run STATE JOB_ID [--run RUN_ID]`: one run of a job, as cron (or a manual run)
 * starts it, as root. The job's file (written by the driver, root's alone) says what to run;
 * the command runs as the account's Unix user in its home, never as root, under the job's lock
 * (`overlap: skip`) and timeout. The run is recorded when it starts and when it ends, with the
 * exit code and the last 64 KiB of its output, for the control plane to collect.
 */
export async function runCronJob(state: string, jobId: string, runId?: string): Promise<CronRunRecord | null> {
  if (!isId('cjb', jobId) || (runId !== undefined && !isId('crn', runId))) throw new Error('not a job or run id');
  // Held until the run ends, taken before the job's file is read: a freeze waits for this run, or
  // this run reads the file the freeze wrote (drainRuns).
  const running = await lock(state, runsLock(jobId), true);
  try {
    return await runLocked(state, jobId, runId, running !== null);
  } finally {
    await running?.release();
  }
}

async function runLocked(
  state: string,
  jobId: string,
  runId: string | undefined,
  unfrozen: boolean,
): Promise<CronRunRecord | null> {
  const job = await readJob(state, jobId);
  // A job deleted since cron read its file: nothing to run, nothing to record.
  if (job === null) return null;
  const run: CronRunRecord = {
    id: runId ?? newId('crn'),
    job_id: jobId,
    trigger: runId ? 'manual' : 'schedule',
    status: 'running',
    started_at: new Date().toISOString(),
    finished_at: null,
    exit_code: null,
    output_tail: '',
    reason: null,
  };
  const finish = async (fields: Partial<CronRunRecord>) => {
    Object.assign(run, { finished_at: new Date().toISOString(), ...fields });
    await recordRun(state, run);
    return run;
  };
  if (!unfrozen) return finish({ status: 'skipped', reason: 'the account is being frozen for a move' });
  if (job.suspended) return finish({ status: 'skipped', reason: 'the account is suspended' });
  const held = job.overlap === 'skip' ? await lock(state, `${jobId}.lock`) : { release: async () => undefined };
  if (!held) return finish({ status: 'skipped', reason: 'the previous run is still going (overlap: skip)' });
  try {
    await recordRun(state, run);
    const out = tail(OUTPUT_TAIL_BYTES);
    let result: { code: number | null; timedOut: boolean; stopped: boolean };
    try {
      result = await execute(job, await userIds(job.user), out);
    } catch (err) {
      return await finish({ status: 'failed', reason: (err as Error).message.slice(0, 1000) });
    }
    if (result.stopped) {
      // A freeze writes the job's file saying so before it stops a run; any other SIGTERM does not.
      const reason = (await readJob(state, jobId))?.frozen ? STOPPED_RUN : TERMINATED_RUN;
      return await finish({ status: 'failed', exit_code: result.code, output_tail: out.text(), reason });
    }
    const status = result.timedOut ? 'timed_out' : result.code === 0 ? 'succeeded' : 'failed';
    return await finish({ status, exit_code: result.code, output_tail: out.text() });
  } finally {
    await held.release();
  }
}
