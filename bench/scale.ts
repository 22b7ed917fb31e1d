/**
 * `npm run bench:scale` (PostgreSQL): the cost of reads as the data grows. Seeds, set-based, 1,000
 * domains (10 accounts, 10,000 events) and grows tenfold per step to 1,000,000 domains across
 * 10,000 accounts with 10,000,000 events; at each step measures, through the API on a port, the
 * first and a deep page of the domain list and of the event feed, both filtered by account and
 * the feed by type, the domains and events of a reseller whose accounts are the oldest, an account
 * with its usage, the servers' list with their unit counts (100 servers hold the accounts), the
 * long-poll answer of an agent whose server holds 1,000 pending units, and one look of the backup
 * scheduler. Prints p50 and p99 per step and the p99
 * growth against the first step (goal ≤ 1.5 ×), then checks that the statements ran at the
 * largest size are planned with indexes (as test/api/query-plans.test.ts does on small tables). Each figure is the median of five rounds of 200 requests, the probes
 * taking turns.
 *
 * BENCH_SCALE_ACCOUNTS=10,100,1000,10000 sets the steps; the database is TEST_DATABASE_URL's server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { agentCall } from '../src/agent/client.js';
import { enrol } from '../src/agent/enrol.js';
import type { Identity } from '../src/agent/state.js';
import { buildApp, listenAgents } from '../src/app.js';
import { generateTokenSecret } from '../src/auth/secret.js';
import { loadConfig } from '../src/config.js';
import { openDb, type Db } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { mintOperatorToken } from '../src/modules/tokens/service.js';
import { recordingDb, sequentialScans, type Statement } from './scale/plans.js';
import { scaleProbes, scheduleScan } from './scale/probes.js';
import { grow, SCALE_RESELLER, scaleId, type ScaleSize } from './scale/seed.js';
import { median, percentile } from './stats.js';

const STEPS = (process.env.BENCH_SCALE_ACCOUNTS ?? '10,100,1000,10000').split(',').map(Number);
const SAMPLES = Number(process.env.BENCH_SCALE_SAMPLES ?? 200);
/** Rounds per step, the probes taking turns; each figure is the median round's (a pause of the machine spoils a round, not the figure). */
const ROUNDS = 5;
const SHAPE = { domainsPerAccount: 100, eventsPerAccount: 1000, resellerAccounts: 100 };
const SEEDED_TABLES = ['accounts', 'domains', 'dns_records', 'mail_units', 'events', 'backup_schedules', 'backups'];

const admin = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `berth_bench_scale_${process.pid}`;
async function adminQuery(sql: string) {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * Grows the data with the secondary indexes dropped and built again afterwards: one sort per
 * index instead of millions of insertions into each.
 */
async function growFast(db: Db, size: ScaleSize): Promise<number> {
  const indexes = (
    await db.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = ANY($1)
         AND indexname NOT IN (SELECT conname FROM pg_constraint)`,
      [SEEDED_TABLES],
    )
  ).rows;
  for (const i of indexes) await db.query(`DROP INDEX ${i.indexname}`);
  const started = performance.now();
  await grow(db, size);
  for (const i of indexes) await db.query(i.indexdef);
  await db.query(`VACUUM ANALYZE ${SEEDED_TABLES.join(', ')}`);
  // The bulk load's dirty pages written now, not by a checkpoint in the middle of the measuring.
  await db.query('CHECKPOINT');
  return performance.now() - started;
}

interface Timing {
  p50: number;
  p99: number;
}

async function measure(fn: () => Promise<void>): Promise<Timing> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** Each target warmed, then ROUNDS rounds over all of them in turn; per target the median round. */
async function measureAll(targets: { name: string; run: () => Promise<void> }[]): Promise<Map<string, Timing>> {
  for (const t of targets) for (let i = 0; i < 30; i++) await t.run();
  const rounds = new Map<string, Timing[]>(targets.map((t) => [t.name, []]));
  for (let r = 0; r < ROUNDS; r++) for (const t of targets) rounds.get(t.name)?.push(await measure(t.run));
  return new Map(
    [...rounds].map(([name, ms]) => [
      name,
      {
        p50: median(ms.map((m) => m.p50)),
        p99: median(ms.map((m) => m.p99)),
      },
    ]),
  );
}

/** The accounts whose mail the enrolled server holds: 1,000 domains, their units pending. */
const AGENT_ACCOUNTS = 1000 / SHAPE.domainsPerAccount;

/**
 * A mail server created through the API and enrolled as its agent would be (its certificate
 * kept here), to ask the agent listener for its units as the agent does.
 */
async function enrolledServer(base: string, operatorToken: string, agentUrl: string, agentDir: string) {
  const r = await fetch(`${base}/v1/servers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'scale-agent', roles: ['mail'], ipv4: '10.255.0.1', capacity: { accounts: AGENT_ACCOUNTS } }),
  });
  if (r.status !== 201) throw new Error(`server: ${r.status} ${await r.text()}`);
  const created = (await r.json()) as { id: string; enrolment: { token: string; command: string } };
  const caFingerprint = /--ca-fingerprint (\S+)/.exec(created.enrolment.command)?.[1] as string;
  const identity = await enrol({
    url: agentUrl,
    token: created.enrolment.token,
    caFingerprint,
    dataDir: agentDir,
  });
  return { id: created.id, identity };
}

/**
 * The first AGENT_ACCOUNTS accounts placed on the enrolled server, their mail units pending: a
 * server with 1,000 units to hand its agent at every step, whatever the rest holds.
 */
async function placeOnAgent(db: Db, serverId: string): Promise<void> {
  const ids = Array.from({ length: AGENT_ACCOUNTS }, (_, i) => scaleId('acc', i));
  await db.query('UPDATE accounts SET mail_server_id = $1 WHERE id = ANY($2::text[])', [serverId, ids]);
  await db.query(
    `UPDATE mail_units SET applied_generation = 1, sync_state = 'pending'
     WHERE domain_id IN (SELECT id FROM domains WHERE account_id = ANY($1::text[]))`,
    [ids],
  );
}

/** A token of the seeded reseller (which the first step creates), made through the API. */
async function mintResellerToken(base: string, operatorToken: string): Promise<string> {
  const r = await fetch(`${base}/v1/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'scale reseller', scopes: ['*'], principal: { kind: 'reseller', id: SCALE_RESELLER } }),
  });
  if (r.status !== 201) throw new Error(`reseller token: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { secret: string }).secret;
}

try {
  await adminQuery(`CREATE DATABASE ${name}`);
} catch (err) {
  console.log(`bench:scale needs PostgreSQL (set TEST_DATABASE_URL): ${(err as Error).message}`);
  process.exit(1);
}
const url = new URL(admin);
url.pathname = `/${name}`;
const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-scale-'));
const plain = await openDb({ databaseUrl: url.toString(), dataDir: '', poolSize: 8 });
// One statement of each text, with its latest parameters: the plans are checked once per text,
// and keeping every statement of a step (each poll's thousand keys) grew the heap that the
// measured requests' collections walk.
const seen = new Map<string, Statement>();
const db = recordingDb(plain, (s) => seen.set(s.text, s));
try {
  await migrate(db);
  const token = generateTokenSecret();
  await db.transaction((tx) => mintOperatorToken(tx, token, 'scale'));
  const config = loadConfig({
    BERTH_LOG_LEVEL: 'silent',
    BERTH_JOBS: 'false',
    BERTH_DATA_DIR: dataDir,
    BERTH_RATE_LIMIT_READ: '100000000',
    BERTH_RATE_LIMIT_WRITE: '100000000',
    BERTH_AGENT_LISTEN: '127.0.0.1:0',
  });
  const app = await buildApp({ config, db, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const agentUrl = `https://127.0.0.1:${await listenAgents(app, config)}`;
  const get =
    (p: string, bearer = token) =>
    async () => {
      const r = await fetch(base + p, { headers: { authorization: `Bearer ${bearer}` } });
      if (r.status !== 200) throw new Error(`${p}: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
    };

  let resellerToken: string | undefined;
  let agent: Awaited<ReturnType<typeof enrolledServer>> | undefined;
  /** The agent's poll, answered at once (`wait=0`) with every pending unit. */
  const poll = async () => {
    const r = await agentCall(agentUrl, agent?.identity as Identity, 'GET', '/agent/v1/units?wait=0');
    if (r.status !== 200 || r.body?.units?.length !== 1000) throw new Error(`poll: ${r.status} ${r.body?.units?.length}`);
  };
  const table = new Map<string, Timing[]>();
  const add = (what: string, m: Timing) => table.set(what, [...(table.get(what) ?? []), m]);
  for (const accounts of STEPS) {
    const size = { accounts, ...SHAPE };
    const seedMs = await growFast(plain, size);
    resellerToken ??= await mintResellerToken(base, token);
    // Its key pair kept under the benchmark's directory, removed with it.
    agent ??= await enrolledServer(base, token, agentUrl, path.join(dataDir, 'scale-agent'));
    await placeOnAgent(plain, agent.id);
    console.log(
      `${(accounts * SHAPE.domainsPerAccount).toLocaleString('en')} domains, ${accounts.toLocaleString('en')} accounts, ` +
        `${(accounts * SHAPE.eventsPerAccount).toLocaleString('en')} events (seeded in ${(seedMs / 1000).toFixed(1)} s)`,
    );
    seen.clear();
    const measured = await measureAll([
      ...scaleProbes(size).map((p) => ({ name: p.name, run: get(p.path, p.asReseller ? resellerToken : token) })),
      { name: 'backup schedule scan', run: () => scheduleScan(db, size) },
      { name: 'agent poll, 1,000 units', run: poll },
      // Alone, the server whose 1,000 units wait (the list, newest first, holds it among 49 others).
      { name: 'a server, 1,000 units waiting', run: get(`/v1/servers/${agent.id}`) },
    ]);
    for (const [what, m] of measured) {
      add(what, m);
      console.log(`  ${what.padEnd(32)} p50 ${m.p50.toFixed(1).padStart(6)} ms  p99 ${m.p99.toFixed(1).padStart(6)} ms`);
    }
  }
  console.log(`\np99 at ${STEPS.at(-1)?.toLocaleString('en')} accounts against ${STEPS[0]} (goal ≤ 1.5 ×):`);
  for (const [what, ms] of table) {
    const growth = (ms.at(-1) as Timing).p99 / (ms[0] as Timing).p99;
    console.log(`  ${what.padEnd(32)} ${ms.map((x) => x.p99.toFixed(1)).join(' → ')} ms  × ${growth.toFixed(2)}`);
  }
  const scans = await sequentialScans(plain, [...seen.values()]);
  console.log(
    scans.length
      ? `\nSequential scans:\n${scans.map((s) => `  ${s.tables.join(', ')}: ${s.text}`).join('\n')}`
      : '\nEvery statement is planned with an index.',
  );
  await app.close();
} finally {
  await plain.close();
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  rmSync(dataDir, { recursive: true, force: true });
}
