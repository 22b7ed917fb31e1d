/**
 * Backup throughput: an account with a ~500 MB site (many files, half of each compressible)
 * backed up through the API (POST, then until `completed`), against `tar -czf` of the same
 * files in the same run (alternated, disk flushed before each), plus the server's peak memory
 * above idle while it packs, compresses, hashes and stores, and how long its event loop was held
 * meanwhile (what any other request would have waited).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dropPageCache, flush } from './disk.js';
import { lagDuring, memory, send } from './probes.js';

const MB = Number(process.env.BENCH_BACKUP_MB ?? 500);
const FILE_BYTES = 100 * 1024;

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

function tarCreate(dir: string): number {
  const out = mkdtempSync(path.join(tmpdir(), 'berth-tar-c-'));
  const start = performance.now();
  const r = spawnSync('tar', ['-czf', path.join(out, 'backup.tar.gz'), '-C', dir, '.']);
  const ms = performance.now() - start;
  rmSync(out, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`tar -czf failed: ${r.stderr.toString()}`);
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

/** From the POST to `completed`, then the backup is deleted (max_backups, one at a time). */
async function backup(t: BackupTarget): Promise<number> {
  const start = performance.now();
  const created = await api(t, 'POST', '/v1/backups', { account_id: t.account, include: ['sites'] });
  if (created.status !== 202) throw new Error(`backup: ${created.status} ${JSON.stringify(created.body)}`);
  for (;;) {
    const b = (await api(t, 'GET', `/v1/backups/${String(created.body.id)}`)).body;
    if (b.status === 'completed') break;
    if (b.status === 'failed') throw new Error(`backup failed: ${JSON.stringify(b.error)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = performance.now() - start;
  await api(t, 'DELETE', `/v1/backups/${String(created.body.id)}`);
  return ms;
}

export async function backupBench(t: BackupTarget, rounds: number) {
  const files = fillRelease(t.release);
  const idle = await memory(t, true);
  await backup(t); // uncounted: the code paths are compiled, as in a running service
  const lag = { p99: 0, max: 0 };
  const cached = await pairs(t, rounds, flush, async () => {
    const r = await lagDuring(t, () => backup(t));
    lag.p99 = Math.max(lag.p99, r.p99);
    lag.max = Math.max(lag.max, r.max);
    return r.ms;
  });
  if (!cached) throw new Error('sync(1) failed');
  const after = await memory(t);
  // From the disk: a nightly backup reads files nobody asked for since the last one.
  const cold = await pairs(t, rounds, dropPageCache, () => backup(t));
  return { mb: MB, files, ...cached, peakAboveIdle: after.peak - idle.rss, lag, cold };
}

/**
 * `rounds` pairs of `tar -czf` and a backup, alternating which goes first, `prepare` before
 * each side; the mean of each side. Null where `prepare` cannot be done.
 */
async function pairs(t: BackupTarget, rounds: number, prepare: () => boolean, berth: () => Promise<number>) {
  let tarMs = 0;
  let berthMs = 0;
  for (let i = 0; i < rounds; i++) {
    for (const which of i % 2 === 0 ? ['tar', 'berth'] : ['berth', 'tar']) {
      if (!prepare()) return null;
      if (which === 'tar') tarMs += tarCreate(t.release) / rounds;
      else berthMs += (await berth()) / rounds;
    }
  }
  return { tarMs, berthMs, ratio: tarMs / berthMs };
}
