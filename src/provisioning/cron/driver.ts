import { spawn } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic, writeFileIfChanged } from '../atomic-write.js';
import type { CronDriver } from '../driver.js';
import { endUserProcesses, isPhpFpm, userExists } from '../drivers/user-processes.js';
import { type CronAccountSpec, cronFileName, type CronRunRecord, renderCronFile, renderJobFile } from '../render/cron.js';
import { drainRuns, jobFile, recordRun, runsDir } from './runner.js';

/** The `berth` entry point the runner script starts (this checkout's). */
const BERTH_BIN = fileURLToPath(new URL('../../../bin/berth.mjs', import.meta.url));
const SAFE_PATH = /^\/[A-Za-z0-9._/-]+$/;
/**
 * How long a freeze waits for a run begun before it; past it the run is stopped (drainRuns), and
 * a move rolls back if its source has not frozen within two minutes.
 */
const FREEZE_DRAIN_S = 60;

export interface CronFilesOptions {
  /** Where the accounts' cron files go: `/etc/cron.d` for Debian's cron. */
  cronDir: string;
  /** The runner's state (job files, locks, run records), root's alone. */
  stateDir: string;
  /** Whether jobs run at all: the embedded default renders the same files and runs nothing. */
  runs: boolean;
  /** How long a freeze waits for a run begun before it (FREEZE_DRAIN_S unless a test says). */
  freezeDrainS?: number;
}

/**
 * Cron jobs as files: each account's cron.d file (its lines name the runner script and a job id)
 * and a job file per job, written root-owned 0600 when changed; the runner script
 * (`<state>/run`) starts `berth cron-run` with this state directory. `cron` is Debian's cron
 * reading `/etc/cron.d`; `embedded` renders into the data directory and never runs a tenant's
 * command as Berth's own user.
 */
export class CronFilesDriver implements CronDriver {
  readonly runner: string;

  constructor(
    readonly name: 'embedded' | 'cron',
    private readonly o: CronFilesOptions,
  ) {
    this.runner = path.join(o.stateDir, 'run');
  }

  private async ensureRunner(): Promise<void> {
    for (const p of [process.execPath, BERTH_BIN, this.o.stateDir])
      if (!SAFE_PATH.test(p)) throw new Error(`refusing an unsafe path for the cron runner: ${JSON.stringify(p.slice(0, 100))}`);
    await mkdir(path.join(this.o.stateDir, 'jobs'), { recursive: true, mode: 0o700 });
    await mkdir(path.join(this.o.stateDir, 'accounts'), { recursive: true, mode: 0o700 });
    await chmod(this.o.stateDir, 0o700);
    const script = `#!/bin/sh\nexec ${process.execPath} ${BERTH_BIN} cron-run ${this.o.stateDir} "$@"\n`;
    await writeFileIfChanged(this.runner, script, 0o700);
  }

  /**
   * The account's file in the cron directory (null: none), then, when it changed, the directory's
   * mtime moved past any second cron may have seen: cron rereads its files when that mtime, in
   * whole seconds, differs from the one it saw, and a change in the second of its last look would
   * otherwise wait for the next change.
   */
  private async writeCronFile(username: string, content: string | null): Promise<void> {
    const file = path.join(this.o.cronDir, cronFileName(username));
    if ((await readFile(file, 'utf8').catch(() => null)) === content) return;
    if (content === null) await rm(file, { force: true });
    else await writeFileAtomic(file, content, 0o600);
    const seen = Math.floor((await stat(this.o.cronDir)).mtimeMs / 1000);
    const later = new Date((Math.max(seen, Math.floor(Date.now() / 1000)) + 1) * 1000);
    await utimes(this.o.cronDir, later, later);
  }

  /** The job ids the account's last apply wrote files for. */
  private listFile = (username: string) => path.join(this.o.stateDir, 'accounts', username);
  private async previousJobs(username: string): Promise<string[]> {
    return JSON.parse(await readFile(this.listFile(username), 'utf8').catch(() => '[]')) as string[];
  }

  /** An account without jobs has no file. */
  async applyAccount(spec: CronAccountSpec): Promise<void> {
    if (!spec.jobs.length) return this.removeAccount(spec.username);
    await this.ensureRunner();
    await mkdir(this.o.cronDir, { recursive: true });
    const before = await this.previousJobs(spec.username);
    for (const job of spec.jobs) await writeFileIfChanged(jobFile(this.o.stateDir, job.id), renderJobFile(spec, job), 0o600);
    await this.writeCronFile(spec.username, renderCronFile(spec, this.runner));
    const now = spec.jobs.map((j) => j.id);
    await writeFileIfChanged(this.listFile(spec.username), JSON.stringify(now), 0o600);
    for (const id of before.filter((id) => !now.includes(id))) await rm(jobFile(this.o.stateDir, id), { force: true });
    // Nothing begun before a freeze may write after the move's final copy: neither a run, nor
    // what a run left behind (`nohup`, `setsid`), which no run's lock or process group holds.
    if (spec.frozen && this.o.runs) {
      await drainRuns(this.o.stateDir, now, this.o.freezeDrainS ?? FREEZE_DRAIN_S);
      // No run starts without the user (the runner refuses), so without one nothing was left.
      if (await userExists(spec.user)) await endUserProcesses(spec.user, isPhpFpm);
    }
  }

  async removeAccount(username: string): Promise<void> {
    await this.writeCronFile(username, null);
    for (const id of await this.previousJobs(username)) await rm(jobFile(this.o.stateDir, id), { force: true });
    await rm(this.listFile(username), { force: true });
  }

  /** The embedded default records the run skipped, as a runner would, and says why. */
  async runNow(jobId: string, runId: string): Promise<{ skipped: string } | null> {
    if (!this.o.runs) {
      const skipped = 'no cron driver is configured on this server: jobs are rendered, never run (BERTH_DRIVER_CRON)';
      const now = new Date().toISOString();
      await recordRun(this.o.stateDir, {
        ...{ id: runId, job_id: jobId, trigger: 'manual', status: 'skipped', started_at: now, finished_at: now },
        ...{ exit_code: null, output_tail: '', reason: skipped },
      });
      return { skipped };
    }
    // The runner outlives this request: it records the run itself.
    spawn(this.runner, [jobId, '--run', runId], { detached: true, stdio: 'ignore' }).unref();
    return null;
  }

  async collect(): Promise<CronRunRecord[]> {
    const dir = runsDir(this.o.stateDir);
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
    const runs = await Promise.all(
      names.map(async (n) => JSON.parse(await readFile(path.join(dir, n), 'utf8').catch(() => 'null')) as CronRunRecord | null),
    );
    return runs.filter((r): r is CronRunRecord => r !== null);
  }

  async acknowledge(runIds: string[]): Promise<void> {
    for (const id of runIds) await rm(path.join(runsDir(this.o.stateDir), `${path.basename(id)}.json`), { force: true });
  }
}
