import { execFile } from 'node:child_process';
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { promisify } from 'node:util';
import { ImapFlow } from 'imapflow';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { alive } from '../helpers/daemon-files.js';

/**
 * The daemons `scripts/daemons/up.sh DIR` started, found through `BERTH_IT_DAEMONS=DIR`
 * (`.ci/run` sets it). Without it every integration test reports itself skipped.
 */
const dir = process.env.BERTH_IT_DAEMONS;
export const daemonEnv: Record<string, string> | null = dir
  ? Object.fromEntries(
      readFileSync(`${dir}/env`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    )
  : null;
export const NO_DAEMONS = 'needs the daemons of scripts/daemons/up.sh (BERTH_IT_DAEMONS)';

/** A daemon's address, from its `host:port` setting. */
export const hostPort = (name: string) => {
  const [host, port] = (daemonEnv?.[name] ?? ':0').split(':');
  return { host: host as string, port: Number(port) };
};

/**
 * An app whose drivers are the real daemons; its data directory is readable by them (Dovecot
 * works as `nobody`). Closing it takes its sites' server blocks out of nginx's directory: they
 * name certificate files in the data directory that goes with the app, and a block whose
 * certificate is missing fails `nginx -t` for every later test. The Unix users of its accounts
 * (PHP) go too.
 */
export async function daemonApp(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp({ env: { ...daemonEnv, BERTH_RESYNC_MS: '500', ...env } });
  chmodSync(t.dataDir, 0o755);
  const close = t.close.bind(t);
  t.close = async () => {
    const sites = await t.db.query<{ id: string }>('SELECT id FROM sites');
    const accounts = await t.db.query<{ username: string }>('SELECT username FROM accounts');
    await close();
    for (const { id } of sites.rows) rmSync(`${daemonEnv?.BERTH_NGINX_SITES_DIR}/${id}.conf`, { force: true });
    // The pools and Unix users PHP sites made: the machine outlives the test's data. A pool left
    // behind whose user is gone would fail every later reload of PHP-FPM.
    for (const { username } of accounts.rows) {
      for (const v of (daemonEnv?.BERTH_IT_PHP ?? '').split(',').filter(Boolean))
        rmSync(`${daemonEnv?.BERTH_IT_DAEMONS}/php/${v}/pools/berth-${username}.conf`, { force: true });
      await new Promise((r) => execFile('userdel', [`berth-${username}`], r));
      // Cron files the test left in the machine's cron (jobs not deleted).
      if (daemonEnv?.BERTH_CRON_DIR) rmSync(`${daemonEnv.BERTH_CRON_DIR}/berth-${username}`, { force: true });
      // Its key file and chroot link in the daemons' sshd directory.
      for (const sub of ['keys', 'chroot'])
        if (daemonEnv?.BERTH_SSH_DIR) rmSync(`${daemonEnv.BERTH_SSH_DIR}/berth/${sub}/berth-${username}`, { force: true });
    }
  };
  return t;
}

/** `dig @pdns -p port +short name type` (or @`server`, `host:port`), one answer per line. */
export async function dig(name: string, type: string, server?: string): Promise<string[]> {
  const { host, port } = server ? { host: server.split(':')[0], port: server.split(':')[1] } : hostPort('BERTH_IT_DNS');
  const { stdout } = await promisify(execFile)('dig', [`@${host}`, '-p', String(port), '+short', '+norecurse', name, type]);
  return stdout.split('\n').filter(Boolean);
}

/** The TTL the authoritative server answers a name's first record of `type` with. */
export async function digTtl(name: string, type = 'A'): Promise<number> {
  const { host, port } = hostPort('BERTH_IT_DNS');
  const { stdout } = await promisify(execFile)('dig', [
    `@${host}`,
    '-p',
    String(port),
    '+noall',
    '+answer',
    '+norecurse',
    name,
    type,
  ]);
  return Number(stdout.split(/\s+/)[1]);
}

/** `host:port`, or by default the daemons' own listener named by `name`. */
const at = (name: string, where?: string) => {
  if (!where) return hostPort(name);
  const [host, port] = where.split(':');
  return { host: host as string, port: Number(port) };
};

/** `curl -H 'Host: <hostname>' http://<at><path>`, by default at the daemons' nginx (`curl --resolve`). */
export function httpGet(hostname: string, path = '/', where?: string): Promise<{ status: number; body: string }> {
  const { host, port } = at('BERTH_IT_HTTP', where);
  return new Promise((resolve, reject) => {
    http
      .get({ host, port, path, headers: { host: hostname }, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/**
 * An IMAP login with a real client, by default at the daemons' Dovecot; resolves to true when
 * the server accepts the password.
 */
export async function imapLogin(
  user: string,
  pass: string,
  then?: (client: ImapFlow) => Promise<void>,
  where?: string,
): Promise<boolean> {
  const { host, port } = at('BERTH_IT_IMAP', where);
  const client = new ImapFlow({
    host,
    port,
    secure: false,
    auth: { user, pass },
    logger: false,
    tls: { rejectUnauthorized: false },
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch {
    // A refused login leaves the connection open: Dovecot would hold one per attempt until the
    // test process ends.
    client.close();
    return false;
  }
  try {
    await then?.(client);
  } finally {
    await client.logout().catch(() => undefined);
  }
  return true;
}

/** The messages in a mailbox's INBOX, subject and raw source; null when the login is refused. */
export async function inbox(user: string, pass: string, where?: string): Promise<{ subject: string; source: Buffer }[] | null> {
  const found: { subject: string; source: Buffer }[] = [];
  const ok = await imapLogin(
    user,
    pass,
    async (client) => {
      // FETCH 1:* of an empty mailbox is an error, not an empty answer: nothing delivered yet.
      if (!(await client.mailboxOpen('INBOX')).exists) return;
      for await (const m of client.fetch('1:*', { envelope: true, source: true }))
        found.push({ subject: m.envelope?.subject ?? '', source: m.source ?? Buffer.alloc(0) });
    },
    where,
  );
  return ok ? found : null;
}

/**
 * An SMTP conversation with Postfix (by default the daemons'): each command and the reply code
 * it got. Stops after the first command refused, like a client would.
 */
export function smtp(commands: string[], where?: string): Promise<{ command: string; code: number; text: string }[]> {
  const { host, port } = at('BERTH_IT_SMTP', where);
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host);
    const replies: { command: string; code: number; text: string }[] = [];
    const queue = ['', ...commands];
    let buffer = '';
    socket.setEncoding('utf8');
    socket.setTimeout(15_000, () => socket.destroy(new Error('SMTP timeout')));
    socket.on('error', reject);
    socket.on('close', () => resolve(replies));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      // A reply ends with a line "NNN text" (no dash after the code).
      const done = buffer.match(/(?:^|\r\n)(\d{3}) [^\r\n]*\r\n$/);
      if (!done || !queue.length) return;
      const command = queue.shift() as string;
      replies.push({ command, code: Number(done[1]), text: buffer.trim() });
      buffer = '';
      const next = queue[0];
      if (next === undefined || Number(done[1]) >= 400) {
        socket.end('QUIT\r\n');
        return;
      }
      socket.write(`${next}\r\n`);
    });
  });
}

/** Stops or starts one of the daemons up.sh started, the way an operator would. */
export async function daemon(name: 'powerdns' | 'nginx' | 'postfix' | 'opendkim', action: 'stop' | 'start'): Promise<void> {
  const d = daemonEnv?.BERTH_IT_DAEMONS as string;
  const run = (file: string, args: string[]) => promisify(execFile)(file, args);
  const commands = {
    powerdns: {
      stop: () => run('kill', [readFileSync(`${d}/pdns/pdns.pid`, 'utf8').trim()]),
      start: () => run('pdns_server', [`--config-dir=${d}/pdns`, '--config-name=']),
    },
    nginx: {
      stop: () => run('nginx', ['-c', `${d}/nginx/nginx.conf`, '-s', 'stop']),
      start: () => run('nginx', ['-c', `${d}/nginx/nginx.conf`]),
    },
    postfix: {
      stop: () => run('postfix', ['-c', `${d}/postfix`, 'stop']),
      start: () => run('postfix', ['-c', `${d}/postfix`, 'start']),
    },
    opendkim: {
      stop: () => run('kill', [readFileSync(`${d}/opendkim/opendkim.pid`, 'utf8').trim()]),
      start: () => run('opendkim', ['-x', `${d}/opendkim/opendkim.conf`]),
    },
  };
  // The process itself, for a stop: its port closes before it has exited, and a driver that
  // signals it (OpenDKIM's and Postfix's reloads) would still find it meanwhile.
  const pidFile = {
    powerdns: `${d}/pdns/pdns.pid`,
    opendkim: `${d}/opendkim/opendkim.pid`,
    nginx: `${d}/nginx/nginx.pid`,
    postfix: `${d}/postfix/spool/pid/master.pid`,
  }[name];
  const pid = action === 'stop' && pidFile ? Number(readFileSync(pidFile, 'utf8').trim()) : 0;
  await commands[name][action]();
  const port = { powerdns: 'BERTH_PDNS_API_URL', nginx: 'BERTH_IT_HTTP', postfix: 'BERTH_IT_SMTP', opendkim: 'BERTH_IT_DKIM' }[
    name
  ];
  const target = (daemonEnv?.[port] ?? '').replace(/^https?:\/\//, '').split(':');
  // Until the port answers (start) or refuses (stop). Each probe closes its connection at once: one
  // left open holds a worker of the daemon. Seen: Postfix, reloaded by the apply that came back
  // meanwhile, started no second smtpd beside the one the probe held, and the test's own SMTP
  // conversation got no greeting until that one gave up.
  for (let i = 0; i < 100; i++) {
    const s = net.connect(Number(target[1]), target[0] as string);
    const open = await new Promise<boolean>((resolve) => {
      s.on('connect', () => resolve(true));
      s.on('error', () => resolve(false));
      s.setTimeout(500, () => resolve(false));
    });
    s.destroy();
    if (open === (action === 'start') && !(pid && alive(pid))) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not ${action}`);
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}
/** Runs a program with `input` on its standard input: its exit code and output, never a rejection. */
const run = (file: string, args: string[], input?: string) =>
  new Promise<Ran>((resolve) => {
    const child = execFile(file, args, { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    // A program may exit without reading its input (ssh refusing a login): the pipe's EPIPE is
    // not the run's result, its exit code is.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input ?? '');
  });

/** A new Ed25519 key pair made by ssh-keygen in `dir`: the private key's file and the public key's line. */
export async function sshKeyPair(dir: string, name: string): Promise<{ file: string; public: string }> {
  const file = `${dir}/${name}`;
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
  return { file, public: readFileSync(`${file}.pub`, 'utf8').trim() };
}

/** OpenSSH's client with this key alone, no configuration of the machine's, no question asked. */
const sshOptions = (key: string) => [
  '-F',
  '/dev/null',
  '-i',
  key,
  ...['IdentitiesOnly=yes', 'BatchMode=yes', 'StrictHostKeyChecking=no', 'UserKnownHostsFile=/dev/null']
    .concat(['LogLevel=ERROR', 'ConnectTimeout=10'])
    .flatMap((o) => ['-o', o]),
];

/** `ssh -i key -p port user@host command` at the daemons' sshd. */
export function sshCommand(key: string, user: string, command: string): Promise<Ran> {
  const { host, port } = hostPort('BERTH_IT_SSH');
  return run('ssh', [...sshOptions(key), '-p', String(port), `${user}@${host}`, command]);
}

/** `sftp -b -` with `batch` as its commands, at the daemons' sshd. */
export function sftpBatch(key: string, user: string, batch: string): Promise<Ran> {
  const { host, port } = hostPort('BERTH_IT_SSH');
  return run('sftp', [...sshOptions(key), '-P', String(port), '-b', '-', `${user}@${host}`], batch);
}
