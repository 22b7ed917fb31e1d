import PgBoss from 'pg-boss';
import type { Db, Queryable } from '../db/client.js';
import { JOB_SCHEMA_LOCK } from '../db/migrate.js';
import { currentRequestId } from '../lib/request-context.js';
import { QUEUE_NAMES, UNIT_KEYS } from './names.js';
import { periodic } from './periodic.js';

type Handler = (data: Record<string, unknown>) => Promise<void>;

/** What the queue tells of each job it runs (for metrics). */
export interface JobObserver {
  /** A worker took the job, `waitSeconds` after it was due. */
  started(queue: string, waitSeconds: number): void;
  finished(queue: string, runSeconds: number, outcome: 'completed' | 'failed'): void;
}

/** The resource a job works on, for its log lines: the first `…_id` of its data. */
const resourceOf = (data: Record<string, unknown>) =>
  Object.entries(data).find(([k, v]) => k.endsWith('_id') && k !== 'request_id' && typeof v === 'string')?.[1];

/** A job queue's worker: `run` takes the job's data. */
export interface Worker {
  queue: string;
  run(data: Record<string, unknown>): Promise<void>;
  concurrency?: number;
}

export interface JobQueue {
  /** Enqueues inside the caller's transaction: the job exists if and only if the change does. */
  send(
    tx: Queryable,
    name: string,
    data: Record<string, unknown>,
    opts?: { startAfter?: Date; singletonKey?: string },
  ): Promise<void>;
  /** Runs handler on jobs of the queue, `concurrency` at a time in this process (default 1). */
  work(name: string, handler: Handler, opts?: { concurrency?: number }): Promise<void>;
  /** Makes this process's idle workers of the queue look for jobs now, not at their next poll. */
  wake(name: string): void;
  /** Gives every job of the queue that ran out of retries one more attempt; resolves to how many. */
  retryFailed(name: string): Promise<number>;
  /** A cron schedule that runs once per slot across every process. */
  schedule(name: string, cron: string): Promise<void>;
  /** Jobs waiting or running, per queue (for /metrics). */
  depth(): Promise<[{ queue: string }, number][]>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Every `send` notifies this channel with the queue's name; the commit delivers it to every process. */
const JOB_CHANNEL = 'berth_jobs';

/**
 * A job is leased to the process running it: while the handler runs, the process renews the
 * lease (pg-boss's `started_on`) every fifth of the lease (LEASE_MS unless `leaseMs`); every
 * process looks as often for active jobs whose lease is older — their process died — and hands them back
 * (`retry`, due now, announced on the channel) for any process to resume. Temporal's activity
 * heartbeats, on pg-boss's table. A live job is never taken from its process; pg-boss's own
 * expiry (`expireInSeconds`) stays as the cap on how long one run may take.
 */
const LEASE_MS = 15_000;

/**
 * How often a worker looks for work of its own accord, at the least. Each polling interval the
 * process asks once which of its queues have due jobs (`wakeDue`: jobs delayed or retried, or
 * whose wake was missed) and wakes those queues' workers; it was a fetch by each of its 19
 * workers, ten statements a second in an idle process (4 % of a core on PGlite).
 */
const WORKER_POLL_S = 60;

const executor = (q: Queryable) => ({
  executeSql: async (text: string, values: unknown[] = []) => q.query(text, values),
});

/** pg-boss over our Db: on PostgreSQL and PGlite alike, jobs survive restarts and run once. */
export class PgBossQueue implements JobQueue {
  private readonly boss: PgBoss;
  private get leaseMs(): number {
    return this.opts.leaseMs ?? LEASE_MS;
  }
  private readonly queues = new Set<string>();
  private started = false;
  private readonly pending: [string, Handler, { concurrency?: number }][] = [];
  private readonly workerIds = new Map<string, string[]>();
  private unlisten: (() => Promise<void>) | undefined;
  private readonly reclaimer: ReturnType<typeof periodic>;
  private readonly dueScan: ReturnType<typeof periodic>;
  /** BERTH_JOB_POLL_MS: the due scan's interval. */
  private readonly pollSeconds: number;
  /** pg-boss's statements and our handlers under way: stop() waits for them (see there). */
  private busy = 0;
  /** stop() stopped waiting with some of those still under way (see there). */
  private leftRunning = false;

  constructor(
    private readonly db: Db,
    private readonly opts: {
      runWorkers: boolean;
      onError: (err: unknown) => void;
      pollingIntervalSeconds?: number;
      leaseMs?: number;
      /** A failed job's first retry waits 1–2 × this (pg-boss's jittered backoff), doubling after; 5 s unless set. */
      retryDelaySeconds?: number;
      observer?: JobObserver;
      /** One line when a job starts and one when it ends: queue, resource, duration, outcome, request id. */
      log?: (fields: Record<string, unknown>, message: string) => void;
      /** How long stop() waits for the jobs under way; 8 s unless set (within the process's 10 s to stop). */
      stopWaitMs?: number;
    },
  ) {
    // Multi-statement DDL (pg-boss's own migrations) goes through exec; the rest is parameterised.
    const exec = {
      executeSql: (text: string, values: unknown[] = []) => {
        const run = this.counted(() => (values.length ? db.query(text, values) : db.exec(text)));
        // A job left running by stop() (pg-boss failed it as it stopped: it is retried) ends on a
        // database its owner may have closed, and pg-boss records that end without waiting for
        // or catching it: a failure is reported, not left unhandled, and answers no result
        // (pg-boss counts nothing affected).
        if (!this.leftRunning) return run;
        return run.catch((err: unknown) => {
          opts.onError(err);
          return undefined as unknown as Awaited<typeof run>;
        });
      },
    };
    this.boss = new PgBoss({ db: exec, schedule: opts.runWorkers, supervise: opts.runWorkers, migrate: true });
    this.reclaimer = periodic(() => this.reclaimLost(), this.leaseMs / 5, opts.onError);
    this.pollSeconds = opts.pollingIntervalSeconds ?? 2;
    this.dueScan = periodic(() => this.wakeDue(), this.pollSeconds * 1000, opts.onError);
    this.boss.on('error', opts.onError);
  }

  /** Creates every queue up front: creating one inside a caller's transaction would deadlock PGlite. */
  async start(): Promise<void> {
    // pg-boss creates its schema outside its own lock, and each queue is a table of its own: two
    // processes starting together on an empty database collided (duplicate key) or deadlocked.
    await this.db.withSessionLock(JOB_SCHEMA_LOCK, async () => {
      await this.boss.start();
      for (const name of QUEUE_NAMES) await this.ensureQueue(name);
    });
    this.started = true;
    for (const [name, handler, opts] of this.pending.splice(0)) await this.work(name, handler, opts);
    // Wake on commit: a job sent in any process's transaction starts here as soon as it commits;
    // the workers' polling stays as the fallback (a lost LISTEN connection, a missed wake).
    if (!this.opts.runWorkers) return;
    this.unlisten = await this.db.listen(JOB_CHANNEL, (name) => this.wake(name));
    this.reclaimer.start();
    this.dueScan.start();
  }

  /**
   * Wakes the workers of every queue of this process that has a job due (what pg-boss's fetch asks
   * of one queue): one probe of the queue's index per queue, however many jobs wait.
   */
  private async wakeDue(): Promise<void> {
    const names = [...this.workerIds.keys()];
    if (names.length === 0) return;
    const due = await this.counted(() =>
      this.db.query<{ name: string }>(
        `SELECT q.name FROM unnest($1::text[]) AS q(name)
         WHERE EXISTS (SELECT 1 FROM pgboss.job j WHERE j.name = q.name AND j.state < 'active' AND j.start_after < now())`,
        [names],
      ),
    );
    for (const { name } of due.rows) this.wake(name);
  }

  /** Hands back the jobs of processes that died while running them (see LEASE_MS). */
  private async reclaimLost(): Promise<void> {
    await this.counted(() =>
      this.db.query(
        `WITH lost AS (
           UPDATE pgboss.job SET state = 'retry', start_after = now()
           WHERE state = 'active' AND started_on < now() - make_interval(secs => $1) RETURNING name)
         SELECT pg_notify($2, name) FROM (SELECT DISTINCT name FROM lost) n`,
        [this.leaseMs / 1000, JOB_CHANNEL],
      ),
    );
  }

  private async ensureQueue(name: string): Promise<void> {
    if (this.queues.has(name)) return;
    const options: PgBoss.Queue = {
      name,
      policy: UNIT_KEYS[name] ? 'short' : 'standard',
      retryLimit: 5,
      retryDelay: this.opts.retryDelaySeconds ?? 5,
      retryBackoff: true,
      expireInSeconds: 15 * 60,
    };
    await this.boss.createQueue(name, options);
    // createQueue leaves a queue that exists as it is: a database made by an earlier version gets today's options.
    await this.boss.updateQueue(name, options);
    this.queues.add(name);
  }

  async send(
    tx: Queryable,
    name: string,
    data: Record<string, unknown>,
    opts: { startAfter?: Date; singletonKey?: string } = {},
  ): Promise<void> {
    const unitKey = UNIT_KEYS[name];
    const singletonKey = opts.singletonKey ?? (unitKey ? String(data[unitKey]) : undefined);
    const requestId = currentRequestId();
    const sent = requestId ? { ...data, request_id: requestId } : data;
    await this.boss.send(name, sent, { ...opts, singletonKey, db: executor(tx) } as PgBoss.SendOptions);
    if (!opts.startAfter || opts.startAfter.getTime() <= Date.now())
      await tx.query('SELECT pg_notify($1, $2)', [JOB_CHANNEL, name]);
  }

  async work(name: string, handler: Handler, opts: { concurrency?: number } = {}): Promise<void> {
    if (!this.opts.runWorkers) return;
    if (!this.started) {
      this.pending.push([name, handler, opts]);
      return;
    }
    await this.ensureQueue(name);
    for (let i = 0; i < (opts.concurrency ?? 1); i++) await this.startWorker(name, handler);
  }

  wake(name: string): void {
    for (const id of this.workerIds.get(name) ?? []) this.boss.notifyWorker(id);
  }

  /** pg-boss runs one job at a time per worker; concurrency is several workers. */
  private async startWorker(name: string, handler: Handler): Promise<void> {
    let workerId = '';
    workerId = await this.boss.work<Record<string, unknown>>(
      name,
      {
        pollingIntervalSeconds: Math.max(WORKER_POLL_S, this.pollSeconds),
        batchSize: 1,
        includeMetadata: true,
      },
      async ([job]) => {
        if (!job) return;
        const began = performance.now();
        const fields = { queue: name, job_id: job.id, resource: resourceOf(job.data), request_id: job.data.request_id };
        const due = (at: unknown) => new Date(String(at)).getTime();
        this.opts.observer?.started(name, (due(job.startedOn) - due(job.startAfter)) / 1000);
        this.opts.log?.(fields, 'job started');
        const heartbeat = setInterval(() => void this.renewLease(name, job.id), this.leaseMs / 5);
        let outcome: 'completed' | 'failed' = 'failed';
        try {
          await this.counted(() => handler(job.data));
          outcome = 'completed';
        } finally {
          clearInterval(heartbeat);
          const seconds = (performance.now() - began) / 1000;
          this.opts.observer?.finished(name, seconds, outcome);
          this.opts.log?.({ ...fields, duration_ms: Math.round(seconds * 1000), outcome }, 'job finished');
          // The worker sleeps a polling interval after each job; a busy queue drains without pause.
          this.boss.notifyWorker(workerId);
        }
      },
    );
    this.workerIds.set(name, [...(this.workerIds.get(name) ?? []), workerId]);
  }

  private async renewLease(name: string, id: string): Promise<void> {
    await this.db
      .query(`UPDATE pgboss.job SET started_on = now() WHERE name = $1 AND id = $2 AND state = 'active'`, [name, id])
      .catch(this.opts.onError);
  }

  async retryFailed(name: string): Promise<number> {
    const failed = await this.db.query<{ id: string }>(`SELECT id FROM pgboss.job WHERE name = $1 AND state = 'failed'`, [name]);
    if (failed.rows.length)
      await this.boss.retry(
        name,
        failed.rows.map((r) => r.id),
      );
    return failed.rows.length;
  }

  async schedule(name: string, cron: string): Promise<void> {
    if (this.opts.runWorkers) await this.boss.schedule(name, cron, {}, { tz: 'UTC' });
  }

  async depth(): Promise<[{ queue: string }, number][]> {
    const out: [{ queue: string }, number][] = [];
    for (const name of QUEUE_NAMES) out.push([{ queue: name }, await this.boss.getQueueSize(name)]);
    return out;
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.reclaimer.stop();
    await this.dueScan.stop();
    await this.unlisten?.();
    // Within the process's 10 s to stop: a step still running after 8 s is left to be resumed.
    const waitMs = this.opts.stopWaitMs ?? 8_000;
    const deadline = Date.now() + waitMs;
    await this.boss.stop({ graceful: true, wait: true, close: false, timeout: waitMs });
    // pg-boss waits only for the jobs its workers hold: a fetch under way when it stopped can
    // still hand a worker a job, which then runs (and is completed) after stop() returned, on a
    // database its owner may have closed. Wait for those too.
    while (this.busy > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    this.leftRunning = this.busy > 0;
  }

  private async counted<T>(fn: () => Promise<T>): Promise<T> {
    this.busy++;
    try {
      return await fn();
    } finally {
      this.busy--;
    }
  }
}
