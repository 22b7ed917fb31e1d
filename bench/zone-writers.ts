/**
 * Writers into one zone against writers into a zone each: WRITERS clients add records through the
 * API as fast as they are answered, for SECONDS, first all into one zone and then each into its own
 * (twice each, alternating), plus one writer alone. Prints writes/s, p50 and p99 of each, the
 * one-zone rate ÷ the sixteen-zone rate (goal ≥ 0.8) and the one-zone p99 ÷ its p50 (goal ≤ 3).
 * The benchmark servers' domains are `bench<n>.com`, one per account, with a plan of 20,000 records.
 */
import { flush } from './disk.js';
import { percentile } from './stats.js';

const WRITERS = 16;
const SECONDS = Number(process.env.BENCH_ZONE_SECONDS ?? 4);

interface Target {
  berth: number;
  token: string;
}

interface Run {
  rate: number;
  p50: number;
  p99: number;
}

let written = 0;

/** One writer's loop until `until`: each write a new A record, its latency kept. */
async function writer(t: Target, zone: string, until: number, latencies: number[]): Promise<void> {
  while (performance.now() < until) {
    const name = `w${++written}`;
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${t.berth}/v1/domains/${zone}/records`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, type: 'A', content: '192.0.2.1', ttl: 3600 }),
    });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`zone writers: ${res.status} writing ${name} into ${zone}`);
    latencies.push(performance.now() - started);
  }
}

async function run(t: Target, zones: string[]): Promise<Run> {
  // Each run on a settled disk: what the phase before wrote is not flushed under its commits.
  flush();
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + SECONDS * 1000;
  await Promise.all(zones.map((zone) => writer(t, zone, until, latencies)));
  const elapsed = (performance.now() - started) / 1000;
  return { rate: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

export async function zoneWritersBench(t: Target) {
  const own = Array.from({ length: WRITERS }, (_, i) => `bench${i + 2}.com`);
  const one = Array.from({ length: WRITERS }, () => 'bench1.com');
  await run(t, own.slice(0, 1)); // uncounted: the code paths are compiled
  const alone = await run(t, ['bench100.com']);
  const oneZone: Run[] = [];
  const ownZones: Run[] = [];
  for (const first of [true, false]) {
    for (const which of first ? [one, own] : [own, one]) (which === one ? oneZone : ownZones).push(await run(t, which));
  }
  const mean = (runs: Run[], key: keyof Run) => runs.reduce((n, r) => n + r[key], 0) / runs.length;
  const fair = { rate: mean(oneZone, 'rate'), p50: mean(oneZone, 'p50'), p99: mean(oneZone, 'p99') };
  const spread = { rate: mean(ownZones, 'rate'), p50: mean(ownZones, 'p50'), p99: mean(ownZones, 'p99') };
  return { alone, oneZone: fair, ownZones: spread, ratio: fair.rate / spread.rate, tail: fair.p99 / fair.p50 };
}
