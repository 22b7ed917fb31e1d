import type { TSchema } from 'typebox';
import type { GaugeSource } from './http/metrics.js';
import type { App } from './http/routes.js';

/** A job queue's worker: `run` takes the job's data. */
export interface Worker {
  queue: string;
  run(data: Record<string, unknown>): Promise<void>;
  concurrency?: number;
}

/** A loop every process runs while it runs jobs (jobs/periodic.ts). */
interface Loop {
  start(): void;
  stop(): Promise<void>;
}

/**
 * What a module adds to the app. app.ts registers every module's parts the same way: schemas
 * before the plugins, routes, workers, housekeeping tasks and loops.
 */
export interface Contribution {
  schemas?: TSchema[];
  routes?: (app: App) => void;
  workers?: Worker[];
  loops?: Loop[];
  /** Pruning of what is kept for a while only, run by the hourly housekeeping job. */
  housekeeping?: ((now: Date) => Promise<unknown>)[];
  /** Gauges for /metrics. */
  gauges?: GaugeSource[];
}

/** The series `unit` of the gauge of apply units in `sync_state: error` (each module its own kind). */
export const syncErrorGauge = (unit: string, count: () => Promise<number>): GaugeSource => ({
  name: 'berth_sync_errors',
  help: 'Apply units whose last apply failed (sync_state error), by kind.',
  labelNames: ['unit'],
  read: async () => [[{ unit }, await count()]],
});

/** A worker whose job data names an operation. */
export const operationWorker = (queue: string, run: (operationId: string) => Promise<void>): Worker => ({
  queue,
  run: (data) => run(String(data.operation_id)),
});
