/**
 * HTTPS: how long the internal issuer takes to certify a new key (against `openssl
 * req -x509` making a key and a certificate, in the same run), and, where nginx is installed,
 * a new connection's TLS handshake and first byte through the server block Berth renders
 * (against plain HTTP through the same nginx).
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { renderServerBlock } from '../src/provisioning/render/nginx.js';
import { createCertificateAuthority, signWithCertificateAuthority } from '../src/tls/internal-ca.js';
import { generateKey } from '../src/tls/keys.js';
import { freePort } from '../test/helpers/ports.js';
import { percentile } from './stats.js';

const ROUNDS = Number(process.env.BENCH_TLS_ROUNDS ?? 200);
const ms = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(2)} ms, p95 ${percentile(xs, 95).toFixed(2)} ms`;

async function timed(n: number, run: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await run();
    out.push(performance.now() - started);
  }
  return out;
}

const hasCommand = (name: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

export async function tlsBench(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-tls-bench-'));
  chmodSync(dir, 0o755); // nginx's workers read the page as an unprivileged user
  try {
    const ca = await createCertificateAuthority('Bench Root', new Date());
    const names = ['bench.example.com', 'www.bench.example.com'];
    const issue = await timed(50, async () => signWithCertificateAuthority(ca, names, await generateKey(), new Date()));
    const openssl = hasCommand('openssl')
      ? await timed(50, () =>
          promisify(execFile)('openssl', [
            'req',
            '-x509',
            '-newkey',
            'ec',
            '-pkeyopt',
            'ec_paramgen_curve:P-256',
            '-nodes',
            '-days',
            '90',
            '-subj',
            '/CN=bench.example.com',
            '-keyout',
            path.join(dir, 'k.pem'),
            '-out',
            path.join(dir, 'c.pem'),
          ]),
        )
      : null;
    console.log(`  tls       internal issuer, key + certificate: ${ms(issue)}`);
    if (openssl)
      console.log(
        `            openssl req -x509 (baseline):        ${ms(openssl)} (ratio ${(percentile(openssl, 50) / percentile(issue, 50)).toFixed(2)})`,
      );
    if (!hasCommand('nginx')) return console.log('            handshake: skipped (nginx is not installed)');
    await handshakeBench(dir, ca, names);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function handshakeBench(dir: string, ca: Awaited<ReturnType<typeof createCertificateAuthority>>, names: string[]) {
  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  const key = await generateKey();
  const o = {
    pagesDir: path.join(dir, 'pages'),
    challengeDir: path.join(dir, 'acme'),
    certDir: path.join(dir, 'certs'),
    listen: [`127.0.0.1:${httpPort}`],
    listenTls: [`127.0.0.1:${httpsPort}`],
  };
  const root = path.join(dir, 'root');
  for (const d of [o.pagesDir, o.challengeDir, o.certDir, root, path.join(dir, 'tmp')]) mkdirSync(d, { recursive: true });
  writeFileSync(path.join(root, 'index.html'), 'hello');
  writeFileSync(path.join(o.certDir, 'bench.crt'), await signWithCertificateAuthority(ca, names, key, new Date()));
  writeFileSync(path.join(o.certDir, 'bench.key'), key, { mode: 0o600 });
  const block = renderServerBlock(
    {
      id: 'bench',
      hostnames: names,
      root,
      suspended: false,
      php: null,
      tls: { fullchainPem: '', privateKeyPem: '', redirectHttp: false, hsts: true },
    },
    o,
  );
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log; daemon on;
events { worker_connections 256; }
http { access_log off; client_body_temp_path ${dir}/tmp; proxy_temp_path ${dir}/tmp; fastcgi_temp_path ${dir}/tmp;
  uwsgi_temp_path ${dir}/tmp; scgi_temp_path ${dir}/tmp;
${block} }
`,
  );
  execFileSync('nginx', ['-c', conf]);
  try {
    const get = (mod: typeof http | typeof https, port: number) =>
      new Promise<void>((resolve, reject) => {
        const req = (mod as typeof https).get(
          {
            host: '127.0.0.1',
            port,
            servername: names[0],
            headers: { host: names[0] as string },
            ca: ca.certificate_pem,
            agent: false,
          },
          (res) => {
            if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
            res.once('data', () => resolve());
            res.on('error', reject);
          },
        );
        req.on('error', reject);
      });
    await timed(20, () => get(https, httpsPort));
    await timed(20, () => get(http, httpPort));
    const tlsTimes = await timed(ROUNDS, () => get(https, httpsPort));
    const plain = await timed(ROUNDS, () => get(http, httpPort));
    console.log(`            new connection → first byte, HTTPS (TLS 1.3, ECDSA P-256): ${ms(tlsTimes)}`);
    console.log(
      `            plain HTTP through the same nginx (baseline):              ${ms(plain)} (TLS costs ${(percentile(tlsTimes, 50) - percentile(plain, 50)).toFixed(2)} ms at p50)`,
    );
  } finally {
    execFileSync('nginx', ['-c', conf, '-s', 'stop'], { stdio: 'ignore' });
  }
}
