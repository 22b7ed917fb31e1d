import type { CallerResolver } from '../auth/caller.js';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Clock } from '../lib/time.js';

/** What services need; built once per app by buildApp, never global. */
export interface ServiceDeps {
  db: Db;
  clock: Clock;
  config: Readonly<Config>;
  jobs: JobQueue;
  resolver: CallerResolver;
  /** An account's disk use for quota checks (accounts/usage.ts: diskMeter). */
  diskInUse: (accountId: string) => Promise<number>;
}
