import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import { periodic } from '../../jobs/periodic.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/time.js';
import { anyDue, claimDueDeliveries, RELAY_CHANNEL } from './deliveries-repo.js';

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
 * every process: when a transaction that wrote deliveries commits (NOTIFY), when a delivery
 * finishes or is asked for (`kick`), and on a timer (`BERTH_WEBHOOK_RELAY_MS`: retries that come
 * due, a lost LISTEN connection). Only what fits the bounds is claimed, so 10,000 waiting
 * deliveries stay rows, not memory.
 */
export function deliveryRelay({ db, jobs, clock, config, onError }: RelayDeps) {
  const { relayIntervalMs, concurrency, perEndpoint, timeoutMs } = config.webhooks;

  async function claim(): Promise<void> {
    const now = clock.now();
    if (!(await anyDue(db, now))) return;
    const leaseUntil = new Date(now.getTime() + leaseMs(timeoutMs));
    await db.transaction(async (tx) => {
      const rows = await claimDueDeliveries(tx, now, leaseUntil, { total: concurrency, perEndpoint });
      for (const c of rows) await jobs.send(tx, JOBS.webhookDeliver, { delivery_id: c.id, claim: c.claim });
    });
  }

  const loop = periodic(claim, relayIntervalMs, onError);
  let listening: Promise<(() => Promise<void>) | undefined> | undefined;
  return {
    kick: loop.kick,
    start(): void {
      loop.start();
      listening = db.listen(RELAY_CHANNEL, loop.kick).catch((err: unknown) => void onError(err));
    },
    async stop(): Promise<void> {
      const unlisten = await listening;
      await unlisten?.();
      await loop.stop();
    },
  };
}
