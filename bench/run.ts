/**
 * `npm run bench`: GET /v1/accounts?limit=50 (authenticated, 1,000 accounts) against a bare
 * Fastify route serving the same 50 rows with the same driver, in the same run, on PGlite and
 * (when reachable) PostgreSQL. Prints throughput, p99 latency and their ratio.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const root = path.resolve(import.meta.dirname, '..');

interface Servers {
  berth: number;
  baseline: number;
  token: string;
  driver: string;
}

async function startServers(databaseUrl: string | null) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/servers.ts')], {
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench servers exited with ${code}`)));
  });
  return { servers: JSON.parse(line) as Servers, stop: () => child.kill('SIGKILL') };
}

async function load(url: string, headers: Record<string, string>, seconds: number) {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p99: r.latency.p99 };
}

async function bench(label: string, databaseUrl: string | null) {
  const { servers, stop } = await startServers(databaseUrl);
  try {
    const auth = { authorization: `Bearer ${servers.token}` };
    const targets = [
      { name: 'baseline', url: `http://127.0.0.1:${servers.baseline}/accounts`, headers: {} },
      { name: 'plain', url: `http://127.0.0.1:${servers.baseline}/accounts-plain`, headers: {} },
      { name: 'berth', url: `http://127.0.0.1:${servers.berth}/v1/accounts?limit=50`, headers: auth },
    ];
    const results = new Map(targets.map((t) => [t.name, { rps: 0, p99: 0 }]));
    for (const t of targets) await load(t.url, t.headers, 2);
    // Alternate the targets so drift on a shared machine hits all alike.
    for (let i = 0; i < ROUNDS; i++) {
      for (const t of targets) {
        const r = await load(t.url, t.headers, SECONDS);
        const acc = results.get(t.name)!;
        acc.rps += r.rps / ROUNDS;
        acc.p99 = Math.max(acc.p99, r.p99);
      }
    }
    const get = (name: string) => results.get(name) ?? { rps: 0, p99: 0 };
    const [base, plain, berth] = [get('baseline'), get('plain'), get('berth')];
    const fmt = (r: { rps: number; p99: number }) => `${r.rps.toFixed(0).padStart(6)} req/s p99 ${String(r.p99).padStart(3)} ms`;
    const ratio = berth.rps / base.rps;
    console.log(`${label.padEnd(10)} baseline (same query) ${fmt(base)} | berth ${fmt(berth)} | ratio ${ratio.toFixed(2)}`);
    console.log(`${''.padEnd(10)} plain SELECT * (no join) ${fmt(plain)} | ratio to it ${(berth.rps / plain.rps).toFixed(2)}`);
    return { label, base, berth, ratio };
  } finally {
    stop();
  }
}

async function postgresUrl(): Promise<{ admin: string; url: string; name: string } | null> {
  const admin = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `berth_bench_${process.pid}`;
  const c = new pg.Client({ connectionString: admin });
  try {
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
  } catch {
    console.log('PostgreSQL   skipped: no server reachable (set TEST_DATABASE_URL)');
    return null;
  } finally {
    await c.end().catch(() => undefined);
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { admin, url: url.toString(), name };
}

console.log(`GET /v1/accounts?limit=50, 1,000 accounts, ${CONNECTIONS} connections, ${ROUNDS}×${SECONDS}s per side`);
if (process.env.BENCH_ONLY !== 'postgres') await bench('PGlite', null);
const pgdb = await postgresUrl();
if (pgdb) {
  try {
    const r = await bench('PostgreSQL', pgdb.url);
    const goal = r.ratio >= 0.8 && r.berth.p99 <= 25;
    console.log(`PostgreSQL goal (ratio ≥ 0.8, p99 ≤ 25 ms): ${goal ? 'met' : 'not met'}`);
  } finally {
    const c = new pg.Client({ connectionString: pgdb.admin });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${pgdb.name} WITH (FORCE)`);
    await c.end();
  }
}
