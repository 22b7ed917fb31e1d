/**
 * Time to effect on the embedded drivers, with jobs running in the server process:
 * for a DNS record, a site and a mailbox, the time from sending the write to its effect (the
 * record in the rendered zone file, the site `active`, the mailbox `in_sync`), against the
 * write's own response time in the same run (the baseline: what no job can beat). And the time
 * from killing a process that holds a job (SIGKILL) to another process running it.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { openDb } from '../src/db/client.js';
import { PgBossQueue } from '../src/jobs/queue.js';
import { percentile } from './stats.js';

const ROUNDS = Number(process.env.BENCH_EFFECT_ROUNDS ?? 40);
/**
 * Rounds before those, not counted, whose slowest effect is reported apart: a fresh server's
 * first writes pay once what later ones do not. A mailbox's first argon2id hashes on each of
 * libuv's threads fault in their 19 MiB afresh (about 60 ms more on the development machine's
 * virtual machine; bench/HISTORY.md, "2026-12-03, night"), and glibc keeps that memory for
 * the thread's next hash.
 */
const WARMUP = Number(process.env.BENCH_EFFECT_WARMUP ?? 5);
const root = path.resolve(import.meta.dirname, '..');

interface Target {
  berth: number;
  token: string;
  account: string;
  dataDir: string;
}

const summary = (xs: number[]) => ({ p50: percentile(xs, 50), p95: percentile(xs, 95) });

async function until(check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 60_000) throw new Error('no effect within 60 s');
    await new Promise((r) => setTimeout(r, 1));
  }
}

export async function effectBench(s: Target) {
  const base = `http://127.0.0.1:${s.berth}`;
  const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
  const call = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`${base}${p}`, {
      method,
      headers: body === undefined ? { authorization: headers.authorization } : headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${text.slice(0, 300)}`);
    return text ? (JSON.parse(text) as Record<string, any>) : {};
  };
  await call('POST', '/v1/domains', { account_id: s.account, name: 'effect-bench.com', mail_enabled: true });
  const zoneFile = path.join(s.dataDir, 'rendered', 'dns', 'effect-bench.com.zone');
  const passwd = path.join(s.dataDir, 'rendered', 'mail', 'passwd');
  /** `reported`: when the API says so as well (the mailbox's `in_sync`), looked for once the effect is there. */
  const series = () => ({ answered: [] as number[], effect: [] as number[], reported: [] as number[] });
  const counted = { dns: series(), site: series(), mailbox: series() };
  const warmup = { dns: series(), site: series(), mailbox: series() };
  const measure = async (
    into: ReturnType<typeof series>,
    write: () => Promise<Record<string, any>>,
    effect: (r: Record<string, any>) => Promise<boolean>,
    reported?: (r: Record<string, any>) => Promise<boolean>,
  ) => {
    const started = performance.now();
    const r = await write();
    into.answered.push(performance.now() - started);
    await until(() => effect(r));
    into.effect.push(performance.now() - started);
    if (reported) {
      await until(() => reported(r));
      into.reported.push(performance.now() - started);
    }
    return r;
  };
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    const out = i < WARMUP ? warmup : counted;
    const content = `198.51.100.${(i % 250) + 1}`;
    await measure(
      out.dns,
      () => call('POST', '/v1/domains/effect-bench.com/records', { name: `e${i}`, type: 'A', content }),
      async () => (await readFile(zoneFile, 'utf8').catch(() => '')).includes(`e${i}\t`),
    );
    const site = await measure(
      out.site,
      () => call('POST', '/v1/sites', { account_id: s.account, hostname: `s${i}.effect-bench.com` }),
      async (r) => (await call('GET', `/v1/sites/${r.id}`)).status === 'active',
    );
    const box = await measure(
      out.mailbox,
      () => call('POST', '/v1/emails', { address: `m${i}@effect-bench.com`, password: 'correct horse battery staple' }),
      // Its line in the passwd file Dovecot reads, read as the zone file is: asking the API for
      // `in_sync` every millisecond until then loaded the server it measured (bench/HISTORY.md,
      // "2026-12-06, evening"); the API is asked once the line is there.
      async () => (await readFile(passwd, 'utf8').catch(() => '')).includes(`m${i}@effect-bench.com:`),
      async (r) => (await call('GET', `/v1/emails/${r.id}`)).sync_state === 'in_sync',
    );
    // Within the plan's limits: each round removes what it made (a site is gone once its deletion ran).
    await call('DELETE', `/v1/emails/${box.id}`);
    await call('DELETE', `/v1/sites/${site.id}`);
    await until(() => fetch(`${base}/v1/sites/${site.id}`, { headers }).then((r) => r.status === 404));
  }
  const both = (kind: keyof typeof counted) => ({
    answered: summary(counted[kind].answered),
    effect: summary(counted[kind].effect),
    reported: summary(counted[kind].reported),
    warmupMax: Math.max(0, ...warmup[kind].effect),
  });
  return { warmup: WARMUP, dns: both('dns'), site: both('site'), mailbox: both('mailbox') };
}

/** SIGKILL a process holding a job (test/helpers/job-holder.ts); ms until this process runs it. */
export async function resumeBench(databaseUrl: string): Promise<number> {
  const db = await openDb({ databaseUrl, dataDir: '' });
  const queue = new PgBossQueue(db, { runWorkers: false, onError: () => undefined });
  await queue.start();
  await queue.send(db, 'backup.create', { operation_id: 'op_bench' });
  await queue.stop();
  const holder = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test/helpers/job-holder.ts'), 'backup.create'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) =>
    createInterface({ input: holder.stdout }).on('line', (l) => l.startsWith('holding') && resolve()),
  );
  holder.kill('SIGKILL');
  const killed = performance.now();
  let resumed = 0;
  const resumer = new PgBossQueue(db, { runWorkers: true, onError: () => undefined });
  await resumer.work('backup.create', async () => {
    resumed = performance.now();
  });
  await resumer.start();
  await until(async () => resumed > 0);
  await resumer.stop();
  await db.close();
  return resumed - killed;
}
