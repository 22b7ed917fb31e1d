import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/time.js';
import { anyDue, claimDueDeliveries } from './deliveries-repo.js';

/** How long a claimed delivery is a worker's before another may take it over (it died). */
export const leaseMs = (timeoutMs: number) => timeoutMs + 50_000;

export interface RelayDeps {
  db: Db;
  jobs: JobQueue;
  clock: Clock;
  config: Readonly<Config>;
  onError: (err: unknown) => void;
}

/**
 * Moves due deliveries from the outbox to the job queue, within the concurrency bounds, in
 * every process: on a timer, and when a delivery finishes or is asked for (`kick`). Only what
 * fits the bounds is claimed, so 10,000 waiting deliveries stay rows, not memory.
 */
export function deliveryRelay({ db, jobs, clock, config, onError }: RelayDeps) {
  const { relayIntervalMs, concurrency, perEndpoint, timeoutMs } = config.webhooks;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  async function claim(): Promise<number> {
    const now = clock.now();
    if (!(await anyDue(db, now))) return 0;
    const leaseUntil = new Date(now.getTime() + leaseMs(timeoutMs));
    return db.transaction(async (tx) => {
      const claimed = await claimDueDeliveries(tx, now, leaseUntil, { total: concurrency, perEndpoint });
      for (const c of claimed) await jobs.send(tx, JOBS.webhookDeliver, { delivery_id: c.id, claim: c.claim });
      return claimed.length;
    });
  }

  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          if ((await claim()) > 0) jobs.wake(JOBS.webhookDeliver);
        } catch (err) {
          onError(err);
        }
      } while (again && !stopped);
    })().finally(() => (running = null));
  }

  return {
    kick,
    start(): void {
      timer = setInterval(kick, relayIntervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
export type DeliveryRelay = ReturnType<typeof deliveryRelay>;
