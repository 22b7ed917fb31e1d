import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { JobObserver } from '../jobs/queue.js';
import { requestSeries } from './request-series.js';

/** A gauge read at scrape time; sources that share a name (one per module) add their series. */
export interface GaugeSource {
  name: string;
  help: string;
  labelNames: string[];
  read(): Promise<[labels: Record<string, string>, value: number][]>;
}

/**
 * Node's own metrics (garbage collection, event-loop delay, memory), in a registry of the process:
 * they describe the process, not an app, and prom-client never stops what gathers them (a GC
 * observer, an event-loop histogram). One per app would keep every closed app reachable from its
 * GC observer, and each would run on every collection (tests build many apps in one process).
 */
let nodeRegistry: Registry | undefined;
const nodeMetrics = (): Registry => {
  if (!nodeRegistry) {
    nodeRegistry = new Registry();
    collectDefaultMetrics({ register: nodeRegistry });
  }
  return nodeRegistry;
};

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * The app's metrics on prom-client, in a registry of its own (no global: tests build many apps),
 * shown after Node's (nodeMetrics): jobs by queue (wait from due to start, run time, failures) and
 * the gauges the modules contribute; beside them HTTP requests by route and status, counted on
 * every request's path by request-series.ts.
 */
export function createMetrics() {
  const node = nodeMetrics();
  const registry = new Registry();
  const registers = [registry];
  const http = requestSeries({
    requests: { name: 'berth_http_requests_total', help: 'HTTP requests by route and status.' },
    latency: { name: 'berth_http_request_duration_seconds', help: 'Request latency.' },
    buckets: SECONDS,
  });
  const jobWait = new Histogram({
    name: 'berth_job_wait_seconds',
    help: 'Time from a job being due (queued, or its retry time) to a worker starting it, by queue.',
    labelNames: ['queue'],
    buckets: SECONDS,
    registers,
  });
  const jobRun = new Histogram({
    name: 'berth_job_run_seconds',
    help: 'Run time of a job, by queue and outcome.',
    labelNames: ['queue', 'outcome'],
    buckets: SECONDS,
    registers,
  });
  const jobFailures = new Counter({
    name: 'berth_job_failures_total',
    help: 'Job runs that failed (to be retried, or given up), by queue.',
    labelNames: ['queue'],
    registers,
  });
  const gauges = new Map<string, GaugeSource[]>();

  const jobs: JobObserver = {
    started: (queue, waitSeconds) => jobWait.observe({ queue }, Math.max(0, waitSeconds)),
    finished: (queue, runSeconds, outcome) => {
      jobRun.observe({ queue, outcome }, runSeconds);
      if (outcome === 'failed') jobFailures.inc({ queue });
    },
  };

  return {
    jobs,
    /** Counts every answer by its route (the pattern, never the raw URL) and status. */
    install(app: FastifyInstance): void {
      app.addHook('onResponse', (request, reply, done) => {
        http.observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
        done();
      });
    },
    addGauge(source: GaugeSource): void {
      const sources = gauges.get(source.name);
      if (sources) return void sources.push(source);
      gauges.set(source.name, [source]);
      new Gauge({
        name: source.name,
        help: source.help,
        labelNames: source.labelNames,
        registers,
        async collect() {
          this.reset();
          for (const s of gauges.get(source.name) ?? []) for (const [labels, value] of await s.read()) this.set(labels, value);
        },
      });
    },
    contentType: registry.contentType,
    render: async () => `${await node.metrics()}\n${await registry.metrics()}\n${http.text()}`,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
