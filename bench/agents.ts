/**
 * The agents' figures: the time to effect of a change applied by an agent (an account's database
 * unit, rendered by the embedded driver into the agent's own directory) beside the same change
 * applied in-process, in the same run; and what 1,000 idle agents long-polling cost the control
 * plane (memory and CPU of a control plane's process of its own while their polls wait; the
 * agents are simulated by a child process holding 1,000 polls over mutual TLS with one server's
 * certificate: bench/idle-control-plane.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { enrol } from '../src/agent/enrol.js';
import { buildApp, listenAgents } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDb } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { bootstrapOperator } from '../src/modules/tokens/service.js';
import { SERVER_FLAGS } from './flags.js';
import { percentile } from './stats.js';

const ROUNDS = Number(process.env.BENCH_AGENT_ROUNDS ?? 30);
const WARM_UP = 5;
const IDLE_AGENTS = Number(process.env.BENCH_IDLE_AGENTS ?? 1000);
const root = path.resolve(import.meta.dirname, '..');

async function until(check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 60_000) throw new Error('no effect within 60 s');
    await new Promise((r) => setTimeout(r, 1));
  }
}

const TOKEN = 'bench-operator-token-0123456789-abcdefghij';

/** The API in this process on PGlite (on disk, as `npm start` keeps it), with its jobs and the agent listener; called by inject. */
export async function controlPlane(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'berth-bench-control-'));
  const db = await openDb({ databaseUrl: null, dataDir });
  await migrate(db);
  await bootstrapOperator(db, TOKEN);
  const config = loadConfig({
    BERTH_DATA_DIR: dataDir,
    BERTH_LOG_LEVEL: 'silent',
    BERTH_AGENT_LISTEN: '127.0.0.1:0',
    BERTH_BOOTSTRAP_TOKEN: TOKEN,
    BERTH_RATE_LIMIT_READ: '1000000',
    BERTH_RATE_LIMIT_WRITE: '1000000',
    ...env,
  });
  const app = await buildApp({ config, db, logger: false });
  await app.ready();
  const post = async (url: string, body: unknown) => {
    const r = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${TOKEN}` }, payload: body as object });
    return { status: r.statusCode, text: r.body, body: JSON.parse(r.body) };
  };
  const get = async (url: string) => {
    const r = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: r.statusCode, text: r.body, body: JSON.parse(r.body) };
  };
  const close = async () => {
    await app.close();
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { app, config, dataDir, token: TOKEN, post, get, close };
}

/** A server created through the API and enrolled: its agent's directory and identity. */
export async function enrolled(
  t: Awaited<ReturnType<typeof controlPlane>>,
  url: string,
  server: { name: string; roles: string[]; ipv4: string },
) {
  const dataDir = mkdtempSync(path.join(tmpdir(), `berth-bench-${server.name}-`));
  const created = (await t.post('/v1/servers', { ...server, capacity: { accounts: 10 } })).body;
  if (!created.enrolment) throw new Error(`server: ${JSON.stringify(created)}`);
  const fingerprint = /--ca-fingerprint (\S+)/.exec(created.enrolment.command)?.[1] as string;
  const identity = await enrol({ url, token: created.enrolment.token, caFingerprint: fingerprint, dataDir });
  return { id: created.id as string, dataDir, identity };
}

/**
 * A server created through the API, enrolled, and its agent running as a process of its own
 * (`berth agent run`, as on a hosting server) with the embedded drivers in its own directory;
 * `signal` stops it.
 */
export async function benchAgent(
  t: Awaited<ReturnType<typeof controlPlane>>,
  url: string,
  server: { name: string; roles: string[]; ipv4: string },
  signal: AbortSignal,
  env: Record<string, string> = {},
) {
  const { id, dataDir, identity } = await enrolled(t, url, server);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli/main.ts'), 'agent', 'run'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', BERTH_DATA_DIR: dataDir, BERTH_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Its log is shown only if it fails (it says it started, and nothing more while it works).
  let log = '';
  child.stderr?.on('data', (d: Buffer) => (log = (log + String(d)).slice(-4096)));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, sig) => {
      if (code !== 0 && sig !== 'SIGTERM') console.error(`agent ${server.name} exited (${code ?? sig}):\n${log}`);
      resolve();
    }),
  );
  signal.addEventListener('abort', () => child.kill('SIGTERM'), { once: true });
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { id, dataDir, identity, stop };
}

export async function agentBench() {
  const t = await controlPlane();
  const controller = new AbortController();
  let agent: Awaited<ReturnType<typeof benchAgent>> | undefined;
  try {
    const url = `https://127.0.0.1:${await listenAgents(t.app, t.config)}`;
    agent = await benchAgent(t, url, { name: 'bench-db', roles: ['database'], ipv4: '127.0.0.12' }, controller.signal);
    const agentDir = agent.dataDir;
    const plan = (
      await t.post('/v1/plans', {
        name: 'bench',
        max_sites: 1,
        max_domains: 1,
        max_email_accounts: 1,
        max_email_quota_mb: 1,
        disk_quota_mb: 100,
        max_backups: 1,
        max_dns_records_per_domain: 10,
        max_databases: 1000,
      })
    ).body;
    const account = async (username: string, database: string) =>
      (await t.post('/v1/accounts', { username, contact_email: 'b@example.com', plan_id: plan.id, placement: { database } }))
        .body;
    const localAccount = await account('benchlocal', 'srv_00000000000000000000000000');
    const remoteAccount = await account('benchremote', agent.id);
    /** One database made through the API for `acc`, until its unit is rendered in `dir`: how long it took. */
    const round = async (acc: { id: string; username: string }, dir: string, i: number) => {
      const file = path.join(dir, 'rendered', 'db', `${acc.username}.sql`);
      const name = `${acc.username}_d${i}`;
      const started = performance.now();
      const r = await t.post('/v1/databases', { account_id: acc.id, name });
      if (r.status !== 201) throw new Error(`database: ${r.status} ${r.text}`);
      await until(async () => (await readFile(file, 'utf8').catch(() => '')).includes(`\`${name}\``));
      return performance.now() - started;
    };
    // The two take turns, after WARM_UP rounds each not counted (a fresh process's first
    // statements and code paths), so that neither side alone meets them, or a busier moment.
    const inProcess: number[] = [];
    const throughAgent: number[] = [];
    for (let i = 0; i < WARM_UP + ROUNDS; i++) {
      const local = await round(localAccount, t.dataDir, i);
      const remote = await round(remoteAccount, agentDir, i);
      if (i < WARM_UP) continue;
      inProcess.push(local);
      throughAgent.push(remote);
    }
    const summary = (times: number[]) => ({ p50: percentile(times, 50), p95: percentile(times, 95) });
    return { inProcess: summary(inProcess), throughAgent: summary(throughAgent) };
  } finally {
    controller.abort();
    await agent?.stop();
    await t.close();
  }
}

/** What bench/idle-control-plane.ts prints: bytes added by the idle agents, CPU as a share of a core. */
export interface IdleAgentsCost {
  agents: number;
  rssAddedBytes: number;
  jsAddedBytes: number;
  cpuIdle: number;
  cpuWith: number;
}

/**
 * What IDLE_AGENTS idle agents long-polling cost a control plane (bench/idle-control-plane.ts),
 * started for it with the service's V8 flags.
 */
export async function idleAgentsCost(): Promise<IdleAgentsCost> {
  const child = spawn(
    process.execPath,
    [...SERVER_FLAGS, '--expose-gc', '--import', 'tsx', path.join(root, 'bench/idle-control-plane.ts')],
    { cwd: root, env: { ...process.env, IDLE_AGENTS: String(IDLE_AGENTS) }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  // 'close', not 'exit': by then its output has been read to the end.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const figures = lines.filter((l) => l.startsWith('{')).at(-1);
  if (code !== 0 || !figures) throw new Error(`the idle agents' control plane exited (${code}) without its figures`);
  return JSON.parse(figures) as IdleAgentsCost;
}
