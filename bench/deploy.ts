/**
 * Deployment throughput: a ~100 MB tar.gz of many small files deployed through the API,
 * against `tar -xzf` of the same archive in the same run (alternated), plus the server's peak
 * memory above idle while it receives and unpacks, and how long its event loop was held
 * meanwhile. The archive is incompressible on purpose, so its size on the wire is its size on disk.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { flush } from './disk.js';
import { lagDuring, memory } from './probes.js';
import { pairedFigure } from './stats.js';

const FILES = Number(process.env.BENCH_DEPLOY_FILES ?? 10_000);
const FILE_BYTES = 10 * 1024;

export interface DeployTarget {
  berth: number;
  baseline: number;
  token: string;
  site: string;
}

function makeArchive(scratch: string): string {
  const dir = mkdtempSync(path.join(scratch, 'deploy-'));
  const src = path.join(dir, 'src');
  for (let i = 0; i < FILES; i++) {
    const sub = path.join(src, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `f${i}.bin`), randomBytes(FILE_BYTES));
  }
  const archive = path.join(dir, 'site.tar.gz');
  const r = spawnSync('tar', ['-czf', archive, '-C', src, '.']);
  if (r.status !== 0) throw new Error(`tar -czf failed: ${r.stderr.toString()}`);
  return archive;
}

/** Unpacks into a new directory beside the archive. */
function tarExtract(archive: string): number {
  const out = mkdtempSync(path.join(path.dirname(archive), 'tar-x-'));
  const start = performance.now();
  const r = spawnSync('tar', ['-xzf', archive, '-C', out]);
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`tar -xzf failed: ${r.stderr.toString()}`);
  return ms;
}

function upload(t: DeployTarget, archive: string): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: t.berth,
        method: 'POST',
        path: `/v1/sites/${t.site}/deployments`,
        headers: {
          authorization: `Bearer ${t.token}`,
          'content-type': 'application/gzip',
          'content-length': statSync(archive).size,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 202
            ? resolve(performance.now() - start)
            : reject(new Error(`deploy: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`)),
        );
      },
    );
    req.on('error', reject);
    // Read in 1 MiB pieces: in 64 KiB ones (the default) this client took 110–190 ms of CPU per
    // upload on the two cores the server and `tar -xzf` need, against 40–70 (the server sees the
    // same 64 KiB socket reads either way). curl reads the file whole before it sends it.
    createReadStream(archive, { highWaterMark: 1 << 20 }).pipe(req);
  });
}

/**
 * Pairs of `tar -xzf` and a deployment back to back, so that both sides of a pair meet the same
 * phase of the disk (tar alone took 0.6 s or 1.1–2.8 s by phase); the ratio is the median of the
 * pairs' ratios, with the lowest and highest beside it. (A ratio of the sums over two rounds let
 * one slow phase in either round decide a whole run.)
 */
const PAIRS = Number(process.env.BENCH_DEPLOY_PAIRS ?? 5);

/** Leaves its files in `scratch`, which the caller removes when every benchmark is done (see below). */
export async function deployBench(t: DeployTarget, scratch: string) {
  const archive = makeArchive(scratch);
  const mb = statSync(archive).size / 1024 / 1024;
  const idle = await memory(t, true);
  // One deployment first, uncounted: the server's code paths are compiled, as in a running service.
  await upload(t, archive);
  const pairs: { tarMs: number; berthMs: number }[] = [];
  const lag = { p99: 0, max: 0 };
  for (let i = 0; i < PAIRS; i++) {
    // Alternate which goes first, and flush the page cache's dirty pages before each, so neither
    // pays for the other's writeback. Nothing is deleted in between: ext4 passes over inodes
    // freed in the last minute or more when it allocates one (`recently_deleted`), and after
    // 10,000 deletions creating 10,000 files was seen to take five times the kernel time, a
    // cost that fell on whichever side came next.
    const pair = { tarMs: 0, berthMs: 0 };
    for (const which of i % 2 === 0 ? ['tar', 'berth'] : ['berth', 'tar']) {
      flush();
      if (which === 'tar') pair.tarMs = tarExtract(archive);
      else {
        const r = await lagDuring(t, () => upload(t, archive));
        pair.berthMs = r.ms;
        lag.p99 = Math.max(lag.p99, r.p99);
        lag.max = Math.max(lag.max, r.max);
      }
    }
    pairs.push(pair);
  }
  const after = await memory(t);
  return {
    mb,
    files: FILES,
    ...pairedFigure(pairs),
    peakAboveIdle: after.peak - idle.rss,
    lag,
  };
}
