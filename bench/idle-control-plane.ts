/**
 * Run by bench/agents.ts as a process of its own (the service's V8 flags and `--expose-gc`): a
 * control plane whose memory is its own, not that of the benchmarks run before it in the
 * benchmark's process. Measures what IDLE_AGENTS simulated idle agents (bench/idle-agents.ts)
 * cost it while their polls wait, against the same window without them, and prints the figures
 * as one line of JSON.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { listenAgents } from '../src/app.js';
import { controlPlane, enrolled, type IdleAgentsCost } from './agents.js';

const IDLE_AGENTS = Number(process.env.IDLE_AGENTS ?? 1000);
/** An idle agent's poll waits this long before it is answered and made again. */
const POLL_PERIOD_MS = 30_000;
const SETTLE_MS = 10_000;
const root = path.resolve(import.meta.dirname, '..');

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with --expose-gc');

const cpuOver = async (ms: number) => {
  const before = process.cpuUsage();
  await new Promise((r) => setTimeout(r, ms));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / ms;
};
/**
 * The resident set, and the memory JavaScript holds (its heap and the buffers outside it), once
 * what is garbage is collected: what the process holds, not what it has yet to sweep. A
 * collection frees large buffers' memory on a thread of its own after it returns, so collections
 * are repeated until two readings a quarter of a second apart differ by under 1 MiB. The resident
 * set also keeps pages V8 and the allocator have not yet given back, which they do in their own
 * time: the JavaScript figure says what the agents themselves hold.
 */
const held = async () => {
  let last = { rss: Number.NaN, js: Number.NaN };
  for (let i = 0; i < 40; i++) {
    collect();
    await new Promise((r) => setTimeout(r, 250));
    const m = process.memoryUsage();
    const now = { rss: m.rss, js: m.heapUsed + m.external };
    if (Math.abs(now.rss - last.rss) < 1024 * 1024 && Math.abs(now.js - last.js) < 1024 * 1024) return now;
    last = now;
  }
  throw new Error('the memory did not settle in 10 s');
};

const t = await controlPlane();
const url = `https://127.0.0.1:${await listenAgents(t.app, t.config)}`;
const { identity, dataDir } = await enrolled(t, url, { name: 'bench-idle', roles: ['web'], ipv4: '127.0.0.13' });
// The window is one whole poll period, after the first polls have been answered: each agent
// polls once in it, as it does every 30 s for as long as it is idle.
const cpuIdle = await cpuOver(POLL_PERIOD_MS);
const before = await held();
const agents = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/idle-agents.ts')], {
  cwd: root,
  env: { ...process.env, AGENT_URL: url, AGENT_IDENTITY: JSON.stringify(identity), AGENTS: String(IDLE_AGENTS) },
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  await new Promise<void>((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`idle agents exited (${code})`));
    agents.once('exit', exited);
    createInterface({ input: agents.stdout }).on('line', (l) => {
      if (l !== 'waiting') return;
      agents.off('exit', exited);
      resolve();
    });
  });
  // The listener takes the first polls (a handshake and a read of the units each) in the seconds
  // after they are sent; then each waits, and polls again 30 s later.
  await cpuOver(SETTLE_MS);
  const after = await held();
  const [rssAddedBytes, jsAddedBytes] = [after.rss - before.rss, after.js - before.js];
  const cpuWith = await cpuOver(POLL_PERIOD_MS);
  console.log(JSON.stringify({ agents: IDLE_AGENTS, rssAddedBytes, jsAddedBytes, cpuIdle, cpuWith } satisfies IdleAgentsCost));
} finally {
  agents.kill('SIGKILL');
  await t.close();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
