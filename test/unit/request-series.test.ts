import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { requestSeries } from '../../src/http/request-series.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const requests = { name: 'berth_http_requests_total', help: 'HTTP requests by route and status.' };
const latency = { name: 'berth_http_request_duration_seconds', help: 'Request latency.' };

/** Each sample line as `name{labels, sorted} value`, and the comment lines: what a scraper reads. */
const samples = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const m = /^([a-z_]+)\{(.*)\} (.+)$/.exec(l);
      if (!m) return l;
      const labels = (m[2] as string).match(/[a-z]+="(?:[^"\\]|\\.)*"/g) ?? [];
      return `${m[1]}{${labels.sort().join(',')}} ${m[3]}`;
    })
    .sort();

describe('request series', () => {
  it('writes what prom-client writes for the same requests: counts by status, cumulative buckets, +Inf, sum and count', async () => {
    const registry = new Registry();
    const counter = new Counter({ ...requests, labelNames: ['method', 'route', 'status'], registers: [registry] });
    const histogram = new Histogram({ ...latency, labelNames: ['method', 'route'], buckets: BUCKETS, registers: [registry] });
    const ours = requestSeries({ requests, latency, buckets: BUCKETS });
    const seen: [string, string, number, number][] = [
      ['GET', '/v1/domains', 200, 0.0031],
      ['GET', '/v1/domains', 200, 0.005], // on a bound: counted in it (le is "less or equal")
      ['GET', '/v1/domains', 304, 0.012],
      ['POST', '/v1/domains', 422, 0.75],
      ['GET', '/v1/backups/:backup_id/download', 200, 412.5], // past the last bound: +Inf alone
      ['GET', 'weird "route"\\ with\na newline', 404, 0.02],
    ];
    for (const [method, route, status, seconds] of seen) {
      ours.observe(method, route, status, seconds);
      counter.inc({ method, route, status: String(status) });
      histogram.observe({ method, route }, seconds);
    }
    const text = ours.text();
    expect(samples(text)).toEqual(samples(await registry.metrics()));
    expect(text).toContain('berth_http_requests_total{method="GET",route="/v1/domains",status="200"} 2');
    expect(text).toContain('berth_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/domains"} 2');
    expect(text).toContain('route="weird \\"route\\"\\\\ with\\na newline"');
  });

  it('writes the two families with nothing counted yet', () => {
    expect(requestSeries({ requests, latency, buckets: BUCKETS }).text()).toBe(
      [
        '# HELP berth_http_requests_total HTTP requests by route and status.',
        '# TYPE berth_http_requests_total counter',
        '',
        '# HELP berth_http_request_duration_seconds Request latency.',
        '# TYPE berth_http_request_duration_seconds histogram',
        '',
      ].join('\n'),
    );
  });
});
