/**
 * Backup throughput: an account with a ~500 MB site (many files, half of each compressible)
 * backed up through the API (POST, then until `completed`), against `tar -I pigz -cf` of the same
 * files in the same run (alternated, disk flushed before each), with the archives' sizes; then
 * restored through the API against `tar -I pigz -xf` of the reference's archive; plus the server's peak memory
 * above idle while it packs, compresses, hashes and stores, and how long its event loop was held
 * meanwhile (what any other request would have waited).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { dropPageCache, flush } from './disk.js';
import { lagDuring, memory, send } from './probes.js';
import { pairedFigure } from './stats.js';

const MB = Number(process.env.BENCH_BACKUP_MB ?? 500);
const FILE_BYTES = 100 * 1024;
/**
 * A restore (1–2 s) swung from 0.85 to 1.39 × pigz's extraction between runs of one commit in
 * two pairs; as the deployments' figure, it is the median of five pairs' own ratios.
 */
const RESTORE_PAIRS = Number(process.env.BENCH_RESTORE_PAIRS ?? 5);

export interface BackupTarget {
  berth: number;
  baseline: number;
  token: string;
  account: string;
  release: string;
}

/** Files of random bytes followed by as many of text: gzip has real work on both halves. */
function fillRelease(dir: string): number {
  const files = Math.round((MB * 1024 * 1024) / FILE_BYTES);
  const text = Buffer.from('<p>Berth backs up what the account holds.</p>\n'.repeat(FILE_BYTES / 2 / 46 + 1)).subarray(
    0,
    FILE_BYTES / 2,
  );
  for (let i = 0; i < files; i++) {
    const sub = path.join(dir, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `f${i}.html`), Buffer.concat([randomBytes(FILE_BYTES / 2), text]));
  }
  return files;
}

/**
 * The reference: tar through pigz at gzip's default level with a thread per core, as a provider
 * would script a fast backup; `tar -czf` where pigz is not installed (the figures say which).
 */
const PIGZ = spawnSync('pigz', ['--version']).status === 0;
export const REFERENCE = PIGZ ? 'tar -I pigz' : 'tar -czf (pigz is not installed)';
const compressor = PIGZ ? ['-I', `pigz -6 -p ${availableParallelism()}`] : ['-z'];

/** The reference's archive of `dir`, its time and size; kept in `keep` when given. */
function tarCreate(dir: string, keep?: string): { ms: number; bytes: number } {
  const out = mkdtempSync(path.join(tmpdir(), 'berth-tar-c-'));
  const file = keep ?? path.join(out, 'backup.tar.gz');
  const start = performance.now();
  const r = spawnSync('tar', [...compressor, '-cf', file, '-C', dir, '.']);
  const ms = performance.now() - start;
  const bytes = statSync(file).size;
  rmSync(out, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`${REFERENCE} failed: ${r.stderr.toString()}`);
  return { ms, bytes };
}

/** The reference's extraction of `file` into a directory of its own. */
function tarExtract(file: string): number {
  const out = mkdtempSync(path.join(tmpdir(), 'berth-tar-x-'));
  const start = performance.now();
  const r = spawnSync('tar', [...(PIGZ ? ['-I', 'pigz'] : ['-z']), '-xf', file, '-C', out]);
  const ms = performance.now() - start;
  rmSync(out, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`${REFERENCE} -x failed: ${r.stderr.toString()}`);
  return ms;
}

async function api(t: BackupTarget, method: string, url: string, body?: unknown) {
  const res = await send(`http://127.0.0.1:${t.berth}${url}`, {
    method,
    headers: { authorization: `Bearer ${t.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (res.status === 204 ? null : await res.json()) as Record<string, unknown> };
}

interface FeedEvent {
  id: string;
  type: string;
  resource: { id: string };
  data: { error?: unknown };
}

/** The feed's newest event: where following it starts. */
async function newestEvent(t: BackupTarget): Promise<string> {
  const [newest] = (await api(t, 'GET', '/v1/events?limit=1')).body.data as FeedEvent[];
  if (!newest) throw new Error('the event feed is empty');
  return newest.id;
}

/**
 * Follows the event feed from `after` (its long poll) until the event of `type` + `.completed` or
 * `.failed` for `resource`: Berth's side ends as a client following the feed learns it, at once,
 * as the reference's ends when its process exits (a poll every 50 ms added 0–50 ms to Berth's).
 */
async function until(t: BackupTarget, after: string, type: string, resource: string): Promise<void> {
  for (;;) {
    const events = (await api(t, 'GET', `/v1/events?after=${after}&wait=30&limit=100`)).body.data as FeedEvent[];
    for (const e of events) {
      if (e.resource.id !== resource) continue;
      if (e.type === `${type}.completed`) return;
      if (e.type === `${type}.failed`) throw new Error(`${type} failed: ${JSON.stringify(e.data.error)}`);
    }
    after = events.at(-1)?.id ?? after;
  }
}

/** From the POST to `completed`; then the backup is deleted (max_backups, one at a time) unless kept. */
async function backup(t: BackupTarget, keep = false): Promise<{ ms: number; bytes: number; id: string }> {
  const after = await newestEvent(t);
  const start = performance.now();
  const created = await api(t, 'POST', '/v1/backups', { account_id: t.account, include: ['sites'] });
  if (created.status !== 202) throw new Error(`backup: ${created.status} ${JSON.stringify(created.body)}`);
  const id = String(created.body.id);
  await until(t, after, 'backup', id);
  const ms = performance.now() - start;
  const size = Number((await api(t, 'GET', `/v1/backups/${id}`)).body.size_bytes);
  if (!keep) await api(t, 'DELETE', `/v1/backups/${id}`);
  return { ms, bytes: size, id };
}

/** A restore of the backup through the API, from the POST until its operation succeeded (its event). */
async function restore(t: BackupTarget, id: string): Promise<number> {
  const after = await newestEvent(t);
  const start = performance.now();
  const started = await api(t, 'POST', `/v1/backups/${id}/restore`, { include: ['sites'] });
  if (started.status !== 202) throw new Error(`restore: ${started.status} ${JSON.stringify(started.body)}`);
  await until(t, after, 'backup.restore', id);
  return performance.now() - start;
}

export async function backupBench(t: BackupTarget, rounds: number) {
  const files = fillRelease(t.release);
  const idle = await memory(t, true);
  await backup(t); // uncounted: the code paths are compiled, as in a running service
  const lag = { p99: 0, max: 0 };
  let sizes = { berth: 0, reference: 0 };
  const cached = await pairs(
    rounds,
    flush,
    () => {
      const r = tarCreate(t.release);
      sizes = { ...sizes, reference: r.bytes };
      return r.ms;
    },
    async () => {
      const r = await lagDuring(t, async () => {
        const made = await backup(t);
        sizes = { ...sizes, berth: made.bytes };
        return made.ms;
      });
      lag.p99 = Math.max(lag.p99, r.p99);
      lag.max = Math.max(lag.max, r.max);
      return r.ms;
    },
  );
  if (!cached) throw new Error('sync(1) failed');
  const after = await memory(t);
  // From the disk: a nightly backup reads files nobody asked for since the last one.
  const cold = await pairs(
    rounds,
    dropPageCache,
    () => tarCreate(t.release).ms,
    async () => (await backup(t)).ms,
  );
  // Restores: the account's backup put back through the API against the reference's extraction of its own archive.
  const kept = await backup(t, true);
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-tar-ref-'));
  const archive = path.join(dir, 'reference.tar.gz');
  tarCreate(t.release, archive);
  const restored = await pairs(
    RESTORE_PAIRS,
    flush,
    () => tarExtract(archive),
    () => restore(t, kept.id),
  );
  rmSync(dir, { recursive: true, force: true });
  await api(t, 'DELETE', `/v1/backups/${kept.id}`);
  return {
    mb: MB,
    files,
    ...cached,
    sizeRatio: sizes.berth / sizes.reference,
    peakAboveIdle: after.peak - idle.rss,
    lag,
    cold,
    restored: restored && pairedFigure(restored.each),
  };
}

/**
 * `rounds` pairs of the reference and Berth, alternating which goes first, `prepare` before
 * each side; the mean of each side, and each pair's times. Null where `prepare` cannot be done.
 */
async function pairs(rounds: number, prepare: () => boolean, reference: () => number, berth: () => Promise<number>) {
  const each: { tarMs: number; berthMs: number }[] = [];
  for (let i = 0; i < rounds; i++) {
    const pair = { tarMs: 0, berthMs: 0 };
    for (const which of i % 2 === 0 ? ['tar', 'berth'] : ['berth', 'tar']) {
      if (!prepare()) return null;
      if (which === 'tar') pair.tarMs = reference();
      else pair.berthMs = await berth();
    }
    each.push(pair);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const tarMs = mean(each.map((p) => p.tarMs));
  const berthMs = mean(each.map((p) => p.berthMs));
  return { tarMs, berthMs, ratio: tarMs / berthMs, each };
}
