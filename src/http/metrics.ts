import type { FastifyInstance } from 'fastify';

/** Minimal Prometheus text exposition: request counts and latency histograms by route and status. */
export interface Metrics {
  render(): Promise<string>;
  /** Extra gauges computed at scrape time (job queue depth, ...). */
  addGauge(name: string, help: string, read: () => Promise<Record<string, number>>): void;
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function installMetrics(app: FastifyInstance): Metrics {
  const counts = new Map<string, number>();
  const histograms = new Map<string, { buckets: number[]; sum: number; count: number }>();
  const gauges: { name: string; help: string; read: () => Promise<Record<string, number>> }[] = [];
  const label = (v: string) => v.replace(/["\\\n]/g, '_');

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `method="${request.method}",route="${label(route)}",status="${reply.statusCode}"`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const hkey = `method="${request.method}",route="${label(route)}"`;
    const h = histograms.get(hkey) ?? { buckets: BUCKETS.map(() => 0), sum: 0, count: 0 };
    const seconds = reply.elapsedTime / 1000;
    BUCKETS.forEach((b, i) => {
      if (seconds <= b) h.buckets[i] = (h.buckets[i] ?? 0) + 1;
    });
    h.sum += seconds;
    h.count += 1;
    histograms.set(hkey, h);
  });

  return {
    addGauge(name, help, read) {
      gauges.push({ name, help, read });
    },
    async render() {
      const lines = [
        '# HELP berth_http_requests_total HTTP requests by route and status.',
        '# TYPE berth_http_requests_total counter',
      ];
      for (const [k, v] of counts) lines.push(`berth_http_requests_total{${k}} ${v}`);
      lines.push(
        '# HELP berth_http_request_duration_seconds Request latency.',
        '# TYPE berth_http_request_duration_seconds histogram',
      );
      for (const [k, h] of histograms) {
        BUCKETS.forEach((b, i) => lines.push(`berth_http_request_duration_seconds_bucket{${k},le="${b}"} ${h.buckets[i]}`));
        lines.push(`berth_http_request_duration_seconds_bucket{${k},le="+Inf"} ${h.count}`);
        lines.push(
          `berth_http_request_duration_seconds_sum{${k}} ${h.sum}`,
          `berth_http_request_duration_seconds_count{${k}} ${h.count}`,
        );
      }
      for (const g of gauges) {
        lines.push(`# HELP ${g.name} ${g.help}`, `# TYPE ${g.name} gauge`);
        for (const [labels, v] of Object.entries(await g.read())) lines.push(`${g.name}${labels ? `{${labels}}` : ''} ${v}`);
      }
      return lines.join('\n') + '\n';
    },
  };
}
