/**
 * PHP: requests per second of a small PHP page through nginx with the server block and
 * pool Berth renders, against the same page asked of PHP-FPM directly over FastCGI (the cost of
 * Berth's configuration and of nginx itself), where nginx and PHP-FPM are installed.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { installedPhpVersions } from '../src/lib/php-versions.js';
import { renderServerBlock } from '../src/provisioning/render/nginx.js';
import { DEFAULT_PHP_SETTINGS, renderPool } from '../src/provisioning/render/php-fpm.js';
import { freePort } from '../test/helpers/ports.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const PAGE = '<?php echo "Hello from PHP ", PHP_VERSION, " at ", $_SERVER["REQUEST_URI"];';

/** FastCGI records (type, request 1) as PHP-FPM reads them. */
function record(type: number, body: Buffer): Buffer {
  const padding = (8 - (body.length % 8)) % 8;
  const header = Buffer.from([1, type, 0, 1, body.length >> 8, body.length & 0xff, padding, 0]);
  return Buffer.concat([header, body, Buffer.alloc(padding)]);
}
function params(p: Record<string, string>): Buffer {
  const len = (n: number) => (n < 128 ? Buffer.from([n]) : Buffer.from([(n >>> 24) | 0x80, n >>> 16, n >>> 8, n]));
  return Buffer.concat(
    Object.entries(p).flatMap(([k, v]) => [len(k.length), len(Buffer.byteLength(v)), Buffer.from(k), Buffer.from(v)]),
  );
}

/** One FastCGI request on a new connection, as nginx makes them (no fastcgi_keep_conn): resolves at END_REQUEST. */
function fastcgiRequest(socket: string, request: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const conn = net.connect(socket, () => conn.write(request));
    let pending = Buffer.alloc(0);
    conn.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 8) {
        const size = 8 + pending.readUInt16BE(4) + (pending[6] as number);
        if (pending.length < size) break;
        const type = pending[1];
        pending = pending.subarray(size);
        if (type === 3) {
          conn.destroy();
          resolve();
        }
      }
    });
    conn.on('error', reject);
    conn.on('close', () => reject(new Error('PHP-FPM closed the connection before answering')));
  });
}

/** One client asking for the page again and again until `until`; the answers it got. */
async function fastcgiLoop(socket: string, script: string, until: number): Promise<number> {
  const request = Buffer.concat([
    record(1, Buffer.from([0, 1, 0, 0, 0, 0, 0, 0])), // BEGIN_REQUEST: responder
    record(
      4,
      params({ SCRIPT_FILENAME: script, REQUEST_METHOD: 'GET', REQUEST_URI: '/', QUERY_STRING: '', SERVER_PROTOCOL: 'HTTP/1.1' }),
    ),
    record(4, Buffer.alloc(0)),
    record(5, Buffer.alloc(0)),
  ]);
  let done = 0;
  while (Date.now() < until) {
    await fastcgiRequest(socket, request);
    done++;
  }
  return done;
}

export async function phpBench(): Promise<void> {
  const version = installedPhpVersions()[0];
  const hasNginx = (() => {
    try {
      execFileSync('nginx', ['-v'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  if (!version || !hasNginx || process.getuid?.() !== 0)
    return console.log('  php       skipped (needs nginx, PHP-FPM and root to run a pool as another user)');
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-php-bench-'));
  chmodSync(dir, 0o755);
  const root = path.join(dir, 'root');
  for (const d of [root, path.join(dir, 'tmp'), path.join(dir, 'pages')]) mkdirSync(d, { recursive: true });
  writeFileSync(path.join(root, 'index.php'), PAGE);
  const socket = path.join(dir, 'pool.sock');
  const pool = renderPool(
    { username: 'bench', version, home: dir, tmp: path.join(dir, 'tmp'), workers: 8 },
    { user: 'nobody', socket, webGroup: 'root' },
  ).replace('group = nobody', 'group = nogroup');
  writeFileSync(path.join(dir, 'pool.conf'), pool);
  writeFileSync(
    path.join(dir, 'php-fpm.conf'),
    `[global]\npid = ${dir}/php-fpm.pid\nerror_log = ${dir}/php-fpm.log\ndaemonize = yes\ninclude = ${dir}/pool.conf\n`,
  );
  const port = await freePort();
  const block = renderServerBlock(
    {
      id: 'bench',
      hostnames: ['php.bench.example'],
      root,
      suspended: false,
      tls: null,
      php: { socket, settings: DEFAULT_PHP_SETTINGS },
    },
    { pagesDir: path.join(dir, 'pages'), challengeDir: dir, certDir: dir, listen: [`127.0.0.1:${port}`], listenTls: [] },
  );
  const conf = path.join(dir, 'nginx.conf');
  const tmp = path.join(dir, 'tmp');
  writeFileSync(
    conf,
    `user root; worker_processes 2; pid ${dir}/nginx.pid; error_log ${dir}/error.log; daemon on;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; fastcgi_temp_path ${tmp};
  uwsgi_temp_path ${tmp}; scgi_temp_path ${tmp};
${block} }
`,
  );
  execFileSync(`php-fpm${version}`, ['--fpm-config', path.join(dir, 'php-fpm.conf')]);
  execFileSync('nginx', ['-c', conf]);
  try {
    const until = (s: number) => Date.now() + s * 1000;
    const direct = async () =>
      (
        await Promise.all(
          Array.from({ length: CONNECTIONS }, () => fastcgiLoop(socket, path.join(root, 'index.php'), until(SECONDS))),
        )
      ).reduce((a, b) => a + b, 0) / SECONDS;
    const viaNginx = async () =>
      (
        await autocannon({
          url: `http://127.0.0.1:${port}/`,
          headers: { host: 'php.bench.example' },
          connections: CONNECTIONS,
          duration: SECONDS,
        })
      ).requests.average;
    await direct(); // warm the pool's processes and opcache
    const [fpm, nginx] = [await direct(), await viaNginx()];
    console.log(`  php       ${version} page through nginx (Berth's block and pool): ${nginx.toFixed(0)} req/s`);
    console.log(
      `            the same page from PHP-FPM over FastCGI (baseline): ${fpm.toFixed(0)} req/s (ratio ${(nginx / fpm).toFixed(2)})`,
    );
  } finally {
    for (const pid of ['nginx.pid', 'php-fpm.pid']) {
      const n = Number(readFileSync(path.join(dir, pid), 'utf8').trim());
      if (n) process.kill(n, 'SIGTERM');
    }
    await new Promise((r) => setTimeout(r, 300));
    rmSync(dir, { recursive: true, force: true });
  }
}
