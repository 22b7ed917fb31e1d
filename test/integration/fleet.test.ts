import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenAgents } from '../../src/app.js';
import { acmeChallengeDir, loginHome } from '../../src/layout.js';
import { eventually, type TestApp } from '../helpers/app.js';
import { tarGz } from '../helpers/archives.js';
import { readEnv } from '../helpers/daemon-files.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';
import { daemonScript, mariadbSql, stopDaemons } from '../helpers/mariadb-servers.js';
import { freePort } from '../helpers/ports.js';
import { daemonApp, daemonEnv, dig, digTtl, httpGet, inbox, NO_DAEMONS, smtp, sshCommand, sshKeyPair } from './daemons.js';

/**
 * Two web servers on one machine: each an agent process (`berth agent`, enrolled with the
 * command the API prints) with its own data directory and its own nginx and PHP-FPM on its own
 * loopback address (scripts/daemons/web-up.sh). An account is placed on each; each site is
 * answered by its own server and its zone names that server's address. A stopped agent makes its
 * server unreachable and its changes wait while the other server's go on; resumed, or killed and
 * started again, it catches up. Each server also runs its own Dovecot, Postfix and OpenDKIM
 * (scripts/daemons/mail-up.sh): an account's mail is received and read at its server; and its
 * own MariaDB (scripts/daemons/db-up.sh): a database placed on it is dumped and loaded by its
 * agent for a backup and a restore, and copied to the other server's when its account moves.
 */
const root = path.resolve(import.meta.dirname, '../..');
const version = daemonEnv?.BERTH_IT_PHP?.split(',')[0];
const ADDRESSES = ['127.0.0.11', '127.0.0.12'] as const;

interface WebServer {
  address: string;
  daemons: string;
  dataDir: string;
  env: Record<string, string>;
  http: string;
  https: string;
  /** Its mail daemons' settings (BERTH_IT_SMTP, BERTH_IT_IMAP: where they listen). */
  mail: Record<string, string>;
  /** Its MariaDB (scripts/daemons/db-up.sh): BERTH_IT_MARIADB and Berth's administrative URL. */
  db: Record<string, string>;
  id: string;
  agent?: ChildProcess;
}

/** The root pebble signs with (made fresh at each start), from its management interface. */
const pebbleRoot = () =>
  new Promise<string>((resolve, reject) => {
    https
      .get(daemonEnv?.BERTH_IT_ACME_ROOTS_URL ?? '', { ca: readFileSync(daemonEnv?.BERTH_IT_ACME_CA_FILE ?? '') }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });

describe.skipIf(!version)(`a fleet of two web servers (${version ? 'agents' : `skipped: ${NO_DAEMONS} with PHP-FPM`})`, () => {
  let t: TestApp;
  const servers: WebServer[] = [];
  const dirs: string[] = [];
  const output = new Map<ChildProcess, string>();

  /** `berth agent ...` as its own process, with the server's own settings only. */
  function agent(server: WebServer, args: string[]): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli/main.ts'), 'agent', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', BERTH_DATA_DIR: server.dataDir, BERTH_LOG_LEVEL: 'warn', ...server.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    output.set(child, '');
    const keep = (d: Buffer) => output.set(child, (output.get(child) ?? '') + String(d));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    return child;
  }
  const exited = (child: ChildProcess) =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve(child.exitCode)
      : new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const status = async (server: WebServer) => (await t.get(`/v1/servers/${server.id}`)).body.status as string;

  beforeAll(async () => {
    t = await daemonApp({
      BERTH_AGENT_LISTEN: '127.0.0.1:0',
      BERTH_ACME_DIRECTORY_URL: daemonEnv?.BERTH_IT_ACME_DIRECTORY_URL ?? '',
      BERTH_ACME_CA_FILE: daemonEnv?.BERTH_IT_ACME_CA_FILE ?? '',
      BERTH_ACME_EMAIL: 'hostmaster@berth.test',
      BERTH_CERTIFICATE_SCHEDULER_MS: '200',
    });
    await listenAgents(t.app, t.config);
    // Both serve on the same ports, as a fleet's servers do (80 and 443): a source that forwards
    // a moved account asks its target on the port a request came on. Server 1's plain HTTP is on
    // the port pebble checks HTTP-01 proofs at (on the address the name resolves to).
    const http = Number(daemonEnv?.BERTH_IT_HTTP?.split(':')[1]);
    const https = await freePort();
    for (const [i, address] of ADDRESSES.entries()) {
      const daemons = mkdtempSync(path.join(tmpdir(), `berth-web-${i + 1}-`));
      const dataDir = mkdtempSync(path.join(tmpdir(), `berth-agent-${i + 1}-`));
      dirs.push(daemons, dataDir);
      // The accounts' users (PHP) traverse to their homes; nginx runs as root.
      chmodSync(dataDir, 0o755);
      expect(await daemonScript('web-up.sh', [daemons, address, String(http), String(https)])).toBe(0);
      expect(await daemonScript('mail-up.sh', [daemons, address])).toBe(0);
      // On the port of the machine's own (up.sh's, on 127.0.0.1), as a fleet's servers share theirs.
      expect(await daemonScript('db-up.sh', [daemons, address, daemonEnv?.BERTH_IT_MARIADB?.split(':')[1] ?? ''])).toBe(0);
      const created = await t.post('/v1/servers', {
        name: `web-${i + 1}`,
        roles: ['web', 'mail', 'database'],
        ipv4: address,
        capacity: { accounts: 10 },
      });
      expect(created.status, created.text).toBe(201);
      const server: WebServer = {
        address,
        daemons,
        dataDir,
        // Its own nginx, PHP-FPM, Dovecot, Postfix, OpenDKIM and MariaDB.
        env: {
          ...readEnv(path.join(daemons, 'web.env')),
          ...readEnv(path.join(daemons, 'mail.env')),
          ...readEnv(path.join(daemons, 'db.env')),
          // What it holds is measured and sent every second (60 s by default).
          BERTH_DATABASE_METER_MS: '1000',
          // The machine's cron (up.sh's) runs its accounts' jobs.
          BERTH_DRIVER_CRON: 'cron',
          BERTH_CRON_DIR: '/etc/cron.d',
          // The machine's sshd (up.sh's) logs its accounts' users in.
          BERTH_DRIVER_SSH: 'openssh',
          BERTH_SSH_DIR: daemonEnv?.BERTH_SSH_DIR ?? '',
          BERTH_SSH_PID_FILE: daemonEnv?.BERTH_SSH_PID_FILE ?? '',
          BERTH_SSH_LOG: daemonEnv?.BERTH_SSH_LOG ?? '',
        },
        http: `${address}:${http}`,
        https: `${address}:${https}`,
        mail: readEnv(path.join(daemons, 'mail.env')),
        db: readEnv(path.join(daemons, 'db.env')),
        id: created.body.id,
      };
      servers.push(server);
      const enrolment = agent(server, (created.body.enrolment.command as string).split(' ').slice(2));
      expect(await exited(enrolment), output.get(enrolment)).toBe(0);
      server.agent = agent(server, ['run']);
    }
    for (const server of servers) await eventually(async () => (await status(server)) === 'online');
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) s.agent?.kill('SIGKILL');
    // Stops what web-up.sh started in a directory (its MariaDB waited for), and nothing in one that holds none.
    for (const dir of dirs) await stopDaemons(dir);
    await t?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const site = async (id: string) => (await t.get(`/v1/sites/${id}`)).body;
  async function deploy(siteId: string, label: string) {
    const r = await t.request('POST', `/v1/sites/${siteId}/deployments`, {
      raw: tarGz([
        { path: 'index.php', content: `<?php echo "${label} from ", $_SERVER["SERVER_ADDR"], " as ", get_current_user();` },
      ]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(r.status, r.text).toBe(202);
    return r.body.id as string;
  }
  const served = (server: WebServer, name: string) => httpGet(name, '/', server.http);
  const serves = (server: WebServer, name: string, text: string) =>
    eventually(async () => (await served(server, name)).body.startsWith(text), 60_000).catch(async (err: Error) => {
      const answer = await served(server, name);
      throw new Error(`${err.message}: ${answer.status} ${answer.body.slice(0, 200)}; agent: ${output.get(server.agent!)}`);
    });

  /** The subjects in an inbox; null when the login is refused, undefined when the mailbox went while being read. */
  async function inboxSubjects(address: string, password: string, where: string) {
    const messages = await inbox(address, password, where).catch(() => undefined);
    return messages && messages.map((m) => m.subject);
  }

  /** A statement run by the `mariadb` client at a server's MariaDB: as `as`, else as Berth's administrative account. */
  const sql = (server: WebServer, statement: string, as?: Parameters<typeof mariadbSql>[2]) =>
    mariadbSql(server.db, statement, as);

  /** An account's database with a user who may do anything in it, in sync on its server. */
  async function database(accountId: string, name: string) {
    const db = (await t.post('/v1/databases', { account_id: accountId, name })).body;
    const user = (await t.post('/v1/database-users', { account_id: accountId, username: name, generate_password: true })).body;
    await t.request('PUT', `/v1/databases/${db.id}/users/${user.id}`, { body: { privileges: ['ALL'] } });
    await eventually(async () => (await t.get(`/v1/database-users/${user.id}`)).body.sync_state === 'in_sync');
    return {
      id: db.id as string,
      as: { user: user.username as string, password: user.password as string, database: db.name as string },
    };
  }

  /**
   * Two clients that keep writing until stopped, each attempt with a number of its own (an
   * attempt whose answer was lost may have been taken, so none is repeated): what each was told
   * was taken. Refusals (a 503 or a 450 during a move's freeze) are tried again with the next number.
   */
  function keepWriting(write: (k: number) => Promise<boolean>, send: (j: number) => Promise<boolean>) {
    let stopped = false;
    const keep = async (attempt: (n: number) => Promise<boolean>, everyMs: number) => {
      const taken: number[] = [];
      for (let n = 0; !stopped; n++) {
        if (await attempt(n).catch(() => false)) taken.push(n);
        await new Promise((r) => setTimeout(r, everyMs));
      }
      return taken;
    };
    const both = Promise.all([keep(write, 25), keep(send, 100)]);
    return {
      stop: async () => {
        stopped = true;
        const [written, sent] = await both;
        return { written, sent };
      },
    };
  }

  /** An operation that must succeed, once it has ended. */
  async function succeeds(operationId: string) {
    const op = await eventually(async () => {
      const now = (await t.get(`/v1/operations/${operationId}`)).body;
      return ['succeeded', 'failed'].includes(now.status) ? now : null;
    }, 120_000);
    expect(op.status, JSON.stringify(op.error)).toBe('succeeded');
  }
  async function backUp(accountId: string, include: string[]): Promise<string> {
    const backup = (await t.post('/v1/backups', { account_id: accountId, include })).body;
    await succeeds(backup.operation.id);
    return backup.id;
  }
  const restore = async (backupId: string) => succeeds((await t.post(`/v1/backups/${backupId}/restore`, {})).body.operation.id);

  it('places an account on each server: each site is answered by its own server, and its zone names that server', async () => {
    const plan = await createPlan(t, undefined, { features: ['php'] });
    const hosted = [];
    for (const server of servers) {
      const account = await createAccount(t, plan.id, undefined, { placement: { web: server.id } });
      const name = `fleet-${account.username}.com`;
      expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
      const created = await t.post('/v1/sites', { account_id: account.id, hostname: name, runtime: `php-${version}` });
      expect(created.status, created.text).toBe(202);
      hosted.push({ server, account, name, siteId: created.body.id as string });
    }
    for (const h of hosted) {
      await eventually(async () => (await dig(h.name, 'A')).join() === h.server.address);
      await eventually(async () => (await site(h.siteId)).status === 'active');
      await deploy(h.siteId, 'v1');
      await serves(h.server, h.name, `v1 from ${h.server.address} as berth-${h.account.username}`);
    }
    const [a, b] = hosted as [(typeof hosted)[0], (typeof hosted)[0]];
    // Each server answers only for its own site.
    expect((await served(b.server, a.name)).status).toBe(404);
    expect((await served(a.server, b.name)).status).toBe(404);

    // Server 1's agent stops: its change waits, server 2's goes on.
    a.server.agent?.kill('SIGSTOP');
    try {
      await deploy(a.siteId, 'v2');
      await deploy(b.siteId, 'v2');
      await serves(b.server, b.name, 'v2 from');
      expect((await served(a.server, a.name)).body).toMatch(/^v1 from/);
      expect((await site(a.siteId)).sync_state).toBe('pending');
      // Three missed polls later (the API's clock moves on, and only forward: rate limits refill
      // by it) it is unreachable; server 2 polls on.
      t.clock.advance(91_000);
      expect(await status(a.server)).toBe('unreachable');
      await t.request('PATCH', `/v1/sites/${b.siteId}`, { body: { php: { memory_limit_mb: 96 } } });
      await eventually(async () => (await status(b.server)) === 'online');
    } finally {
      a.server.agent?.kill('SIGCONT');
    }
    await serves(a.server, a.name, 'v2 from 127.0.0.11');
    await eventually(async () => (await site(a.siteId)).sync_state === 'in_sync');

    // Killed outright and started again: it catches up with what changed meanwhile.
    a.server.agent?.kill('SIGKILL');
    await exited(a.server.agent as ChildProcess);
    await deploy(a.siteId, 'v3');
    expect((await served(a.server, a.name)).body).toMatch(/^v2 from/);
    a.server.agent = agent(a.server, ['run']);
    await serves(a.server, a.name, 'v3 from 127.0.0.11');
    expect((await served(b.server, b.name)).body).toMatch(/^v2 from 127\.0\.0\.12/);
  }, 240_000);

  it('a site on server 1 gets its certificate by HTTP-01, the proof placed and taken away by its agent, and serves it over HTTPS', async () => {
    const server = servers[0] as WebServer;
    const account = await createAccount(t, (await createPlan(t)).id, undefined, { placement: { web: server.id } });
    const name = `tls-${account.username}.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    const created = await t.post('/v1/sites', { account_id: account.id, hostname: name });
    expect(created.status, created.text).toBe(202);
    const siteId = created.body.id as string;
    await eventually(async () => (await site(siteId)).status === 'active');
    const r = await t.request('POST', `/v1/sites/${siteId}/deployments`, {
      raw: tarGz([{ path: 'index.html', content: 'secure on server 1' }]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(r.status, r.text).toBe(202);
    const s = await eventually(async () => {
      const now = await site(siteId);
      return now.tls.status !== 'pending' && now.sync_state === 'in_sync' && now.current_deployment_id === r.body.id ? now : null;
    }, 120_000).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await site(siteId))}; agent: ${output.get(server.agent!)}`);
    });
    expect(s.tls, JSON.stringify(s.tls)).toMatchObject({ status: 'active', issuer: 'acme', names: [name], error: null });

    const rootFile = path.join(server.dataDir, 'pebble-root.pem');
    writeFileSync(rootFile, await pebbleRoot());
    const [host, port] = server.https.split(':') as [string, string];
    const { stdout } = await promisify(execFile)('curl', [
      '-sS',
      '--cacert',
      rootFile,
      '--resolve',
      `${name}:${port}:${host}`,
      `https://${name}:${port}/`,
    ]);
    expect(stdout).toBe('secure on server 1');
    // The proof is gone from the agent's challenge directory once used.
    expect(readdirSync(acmeChallengeDir(server.dataDir))).toEqual([]);
  }, 180_000);

  it('a site on server 1 is backed up as it serves it there, with what its PHP wrote, and restored there', async () => {
    const server = servers[0] as WebServer;
    const plan = await createPlan(t, undefined, { features: ['php'] });
    const account = await createAccount(t, plan.id, undefined, { placement: { web: server.id } });
    const name = `keep-${account.username}.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    const created = await t.post('/v1/sites', { account_id: account.id, hostname: name, runtime: `php-${version}` });
    expect(created.status, created.text).toBe(202);
    const siteId = created.body.id as string;
    await eventually(async () => (await site(siteId)).status === 'active');
    const r = await t.request('POST', `/v1/sites/${siteId}/deployments`, {
      raw: tarGz([
        {
          path: 'index.php',
          content: `<?php if (isset($_GET["note"])) file_put_contents(__DIR__ . "/note.txt", $_GET["note"]); echo @file_get_contents(__DIR__ . "/note.txt");`,
        },
      ]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(r.status, r.text).toBe(202);
    await eventually(
      async () => (await site(siteId)).sync_state === 'in_sync' && (await site(siteId)).current_deployment_id === r.body.id,
    );
    const note = (query = '') => httpGet(name, `/${query}`, server.http).then((a) => a.body);
    await eventually(async () => (await note('?note=kept')) === 'kept');
    // What it sent is counted from server 1's nginx log by its agent and sent with its usage.
    const bandwidth = async () => (await t.get(`/v1/accounts/${account.id}/usage`)).body.usage.bandwidth_bytes as number;
    await eventually(async () => (await bandwidth()) >= 'kept'.length, 30_000);
    const backup = await backUp(account.id, ['sites']);
    expect(await note('?note=changed')).toBe('changed');
    await restore(backup);
    await eventually(async () => (await note()) === 'kept', 60_000);
  }, 180_000);

  it('an account’s mail on server 1 is received and read there: MX at its address, SMTP to its Postfix, IMAP at its Dovecot, kept across a backup and restore, gone with the account', async () => {
    const [one, two] = servers as [WebServer, WebServer];
    const account = await createAccount(t, (await createPlan(t)).id, undefined, { placement: { web: one.id, mail: one.id } });
    const name = `mail-${account.username}.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).status).toBe(201);
    const password = 'a long enough passphrase';
    const box = await t.post('/v1/emails', { address: `info@${name}`, password, quota_mb: 10 });
    expect(box.status, box.text).toBe(201);
    await eventually(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync', 60_000);
    expect(await dig(name, 'MX')).toEqual([`10 mail.${name}.`]);
    expect(await dig(`mail.${name}`, 'A')).toEqual([one.address]);

    const subject = `fleet ${Date.now()}`;
    const sent = await smtp(
      [
        'EHLO client.example',
        'MAIL FROM:<sender@example.org>',
        `RCPT TO:<info@${name}>`,
        'DATA',
        `From: sender@example.org\r\nTo: info@${name}\r\nSubject: ${subject}\r\n\r\nhello\r\n.`,
      ],
      one.mail.BERTH_IT_SMTP,
    );
    expect(sent.at(-1)?.code, JSON.stringify(sent)).toBe(250);
    const subjects = (where: string) => inboxSubjects(`info@${name}`, password, where);
    await eventually(async () => (await subjects(one.mail.BERTH_IT_IMAP as string))?.includes(subject), 30_000);
    // Its usage is what server 1 holds, as its agent measured it (nothing of it is here).
    await eventually(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.usage_bytes > 0, 30_000);
    // Nobody else knows the mailbox: not server 2, not the control plane's own mail server.
    expect(await subjects(two.mail.BERTH_IT_IMAP as string)).toBeNull();
    expect(await subjects(daemonEnv?.BERTH_IT_IMAP as string)).toBeNull();
    const unknown = await smtp(
      ['EHLO client.example', 'MAIL FROM:<sender@example.org>', `RCPT TO:<info@${name}>`],
      two.mail.BERTH_IT_SMTP,
    );
    expect(unknown.at(-1)?.code).not.toBe(250);

    // Backed up there and restored there: the message is read again after its mailbox was deleted.
    const backup = await backUp(account.id, ['emails']);
    expect((await t.request('DELETE', `/v1/emails/${box.body.id}`)).status).toBe(204);
    await eventually(async () => (await subjects(one.mail.BERTH_IT_IMAP as string)) === null, 30_000);
    await restore(backup);
    await eventually(async () => (await subjects(one.mail.BERTH_IT_IMAP as string))?.includes(subject), 30_000);

    // Terminated: the server receives no more mail for it and keeps none of its messages.
    expect((await t.request('DELETE', `/v1/accounts/${account.id}`)).status).toBe(202);
    await eventually(async () => (await subjects(one.mail.BERTH_IT_IMAP as string)) === null, 30_000);
    await eventually(async () => !readdirSync(path.join(one.dataDir, 'accounts')).includes(account.id), 30_000);
  }, 240_000);

  it('an account moves from server 1 to server 2 while clients write to it: its PHP site with what it wrote, its database with every row and its mail with every message are served there, its records point there with a lowered TTL while server 1 proxies and relays to server 2, then server 1 keeps nothing', async () => {
    const [one, two] = servers as [WebServer, WebServer];
    const plan = await createPlan(t, undefined, { features: ['php'] });
    const account = await createAccount(t, plan.id, undefined, {
      placement: { web: one.id, mail: one.id, database: one.id },
    });
    const name = `move-${account.username}.com`;
    // Its database, on server 1's MariaDB; the site reaches it at its own server's address.
    const db = await database(account.id, `${account.username}_app`);
    await sql(one, 'CREATE TABLE writes (k int PRIMARY KEY)', db.as);
    // And an event of its own, which MariaDB's event scheduler runs every second on either server.
    for (const server of [one, two]) await sql(server, 'SET GLOBAL event_scheduler = ON');
    await sql(
      one,
      'CREATE TABLE ticks (at DATETIME(6) PRIMARY KEY); CREATE EVENT tick ON SCHEDULE EVERY 1 SECOND DO INSERT INTO ticks VALUES (NOW(6))',
      db.as,
    );
    const ticks = async (server: WebServer) =>
      (await sql(server, `SELECT at FROM ${db.as.database}.ticks`)).split('\n').filter(Boolean);
    await eventually(async () => (await ticks(one)).length > 0, 30_000);
    const port = Number(one.db.BERTH_IT_MARIADB?.split(':')[1]);
    const connect = Buffer.from(JSON.stringify({ ...db.as, port })).toString('base64');
    expect((await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).status).toBe(201);
    const created = await t.post('/v1/sites', { account_id: account.id, hostname: name, runtime: `php-${version}` });
    expect(created.status, created.text).toBe(202);
    await eventually(async () => (await site(created.body.id)).status === 'active');
    const r = await t.request('POST', `/v1/sites/${created.body.id}/deployments`, {
      raw: tarGz([
        {
          path: 'index.php',
          content: [
            '<?php',
            // A client's writes (`?add=`), each a line in a file and a row in the database, and what
            // the site holds of them (`?writes`: the file, `?rows`: the table).
            `$c = json_decode(base64_decode("${connect}"));`,
            '$db = fn () => new mysqli($_SERVER["SERVER_ADDR"], $c->user, $c->password, $c->database, $c->port);',
            'if (isset($_GET["add"])) { $k = intval($_GET["add"]); $db()->query("INSERT INTO writes VALUES ($k)"); file_put_contents(__DIR__ . "/writes.txt", "$k\\n", FILE_APPEND | LOCK_EX); echo "added $k"; exit; }',
            'if (isset($_GET["writes"])) { echo @file_get_contents(__DIR__ . "/writes.txt"); exit; }',
            'if (isset($_GET["rows"])) { foreach ($db()->query("SELECT k FROM writes ORDER BY k") as $row) echo $row["k"], "\\n"; exit; }',
            'if (isset($_GET["note"])) file_put_contents(__DIR__ . "/note.txt", $_GET["note"]);',
            'echo @file_get_contents(__DIR__ . "/note.txt"), " at ", $_SERVER["SERVER_ADDR"];',
          ].join('\n'),
        },
      ]),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(r.status, r.text).toBe(202);
    const note = (server: WebServer, query = '') => httpGet(name, `/${query}`, server.http).then((a) => a.body);
    await eventually(async () => (await note(one, '?note=written-on-1')) === `written-on-1 at ${one.address}`, 60_000);
    const password = 'a long enough passphrase';
    const box = await t.post('/v1/emails', { address: `info@${name}`, password, quota_mb: 10 });
    expect(box.status, box.text).toBe(201);
    await eventually(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync', 60_000);
    const subject = `moved ${Date.now()}`;
    const deliver = (server: WebServer, about = subject) =>
      smtp(
        [
          'EHLO client.example',
          'MAIL FROM:<sender@example.org>',
          `RCPT TO:<info@${name}>`,
          'DATA',
          `From: sender@example.org\r\nTo: info@${name}\r\nSubject: ${about}\r\n\r\nhello\r\n.`,
        ],
        server.mail.BERTH_IT_SMTP,
      );
    expect((await deliver(one)).at(-1)?.code).toBe(250);
    const subjects = (server: WebServer) => inboxSubjects(`info@${name}`, password, server.mail.BERTH_IT_IMAP as string);
    await eventually(async () => (await subjects(one))?.includes(subject), 30_000);

    // While it moves, a client keeps writing through the site and another keeps sending mail, both
    // to server 1 (as clients with its address cached do), each attempt a new write.
    const writing = keepWriting(
      (k) => note(one, `?add=${k}`).then((answer) => answer === `added ${k}`),
      async (j) => (await deliver(one, `during ${j}`)).at(-1)?.code === 250,
    );
    const moved = await t.post(`/v1/accounts/${account.id}/move`, { to: { web: two.id, mail: two.id, database: two.id } });
    expect(moved.status, moved.text).toBe(202);
    const move = (statuses: string[]) =>
      eventually(async () => {
        const m = (await t.get(`/v1/moves/${moved.body.id}`)).body;
        return [...statuses, 'failed'].includes(m.status) ? m : null;
      }, 120_000);
    const forwarding = await move(['forwarding', 'completed']);
    expect(forwarding.status, JSON.stringify(forwarding.error)).toBe('forwarding');
    const { written, sent } = await writing.stop();
    // Every write and message the clients were told was taken is on server 2, once; none twice.
    expect(written.length, 'writes taken during the move').toBeGreaterThan(0);
    expect(sent.length, 'messages taken during the move').toBeGreaterThan(0);
    // Server 2 answers once its agent has applied the cutover (server 1, once it forwards).
    const held = await eventually(async () => {
      const answer = await httpGet(name, '/?writes', two.http);
      return answer.status === 200 ? answer.body : null;
    }, 60_000);
    const lines = held.split('\n').filter(Boolean).map(Number);
    expect(new Set(lines).size, 'a write twice').toBe(lines.length);
    expect(
      written.filter((k) => !lines.includes(k)),
      `writes lost (taken: ${written.join()})`,
    ).toEqual([]);
    // The rows, in server 2's MariaDB (asked there directly, and through the site served there).
    const rows = (await sql(two, 'SELECT k FROM writes', db.as)).split('\n').filter(Boolean).map(Number);
    expect(
      written.filter((k) => !rows.includes(k)),
      `rows lost (taken: ${written.join()})`,
    ).toEqual([]);
    const ascending = (ks: number[]) => [...ks].sort((a, b) => a - b);
    // Asked as `?writes` was, until answered: a connection kept alive from the freeze may still
    // reach an nginx worker of the frozen configuration, which answers 503.
    const rowsServed = await eventually(async () => {
      const answer = await httpGet(name, '/?rows', two.http);
      return answer.status === 200 ? answer.body : null;
    }, 60_000);
    expect(ascending(rowsServed.split('\n').filter(Boolean).map(Number))).toEqual(ascending(rows));
    // What the event wrote on server 1, stopped there from the freeze, is on server 2, where it
    // writes again since the thaw (not before: the land's comparison with server 1 held).
    const ticked = await ticks(one);
    const copied = await ticks(two);
    expect(ticked.filter((at) => !copied.includes(at))).toEqual([]);
    await eventually(async () => (await ticks(two)).length > copied.length, 30_000);
    expect(await ticks(one)).toEqual(ticked);
    await eventually(async () => {
      const inbox = (await subjects(two)) ?? [];
      expect(new Set(inbox).size, 'a message twice').toBe(inbox.length);
      return sent.every((j) => inbox.includes(`during ${j}`));
    }, 60_000);

    // Served by server 2 with what the site wrote on server 1; the zone names server 2, with the
    // lowered TTL.
    await eventually(async () => (await note(two)) === `written-on-1 at ${two.address}`, 60_000);
    expect(await dig(name, 'A')).toEqual([two.address]);
    expect(await dig(`mail.${name}`, 'A')).toEqual([two.address]);
    await eventually(async () => (await digTtl(name)) === 60);
    // The mailbox on server 2: the same password, the message received on server 1, new mail taken.
    await eventually(async () => (await subjects(two))?.includes(subject), 30_000);
    expect((await deliver(two)).at(-1)?.code).toBe(250);
    // A client with server 1's address cached is answered by server 2 through server 1, and mail
    // sent to server 1 is relayed to server 2's mailbox.
    await eventually(async () => (await note(one, '?note=through-1')) === `through-1 at ${two.address}`, 30_000);
    expect(await note(two)).toBe(`through-1 at ${two.address}`);
    const relayed = `relayed ${Date.now()}`;
    expect((await deliver(one, relayed)).at(-1)?.code).toBe(250);
    await eventually(async () => (await subjects(two))?.includes(relayed), 30_000);

    // Its forwarding time (an hour: the records' old TTL) over, server 1 is cleaned up and the TTLs restored.
    await t.db.query('UPDATE moves SET forward_until = $2 WHERE id = $1', [moved.body.id, t.clock.now()]);
    const done = await move(['completed']);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    await eventually(async () => (await digTtl(name)) === 3600);
    // Server 1 holds nothing of it: no site, no mailbox, no files.
    await eventually(async () => (await subjects(one)) === null, 30_000);
    await eventually(async () => !readdirSync(path.join(one.dataDir, 'accounts')).includes(account.id), 30_000);
    expect((await httpGet(name, '/', one.http)).body).not.toContain('written-on-1');
    await eventually(async () => (await sql(one, `SHOW DATABASES LIKE '${db.as.database}'`)).trim() === '', 30_000);
    await sql(two, `DROP EVENT ${db.as.database}.tick`);
    for (const server of [one, two]) await sql(server, 'SET GLOBAL event_scheduler = OFF');
  }, 300_000);

  it('a database on server 1 is backed up and restored by its agent: the same rows as before', async () => {
    const server = servers[0] as WebServer;
    const account = await createAccount(t, (await createPlan(t)).id, undefined, {
      placement: { web: server.id, database: server.id },
    });
    const db = await database(account.id, `${account.username}_keep`);
    const query = (statement: string) => sql(server, statement, db.as);
    await query("CREATE TABLE items (id int PRIMARY KEY, name varchar(50)); INSERT INTO items VALUES (1, 'tea'), (2, 'café')");
    const rows = () => query('SELECT id, name FROM items ORDER BY id');
    const before = await rows();
    // Its size is as server 1's agent measured it (the control plane measures only its own).
    await eventually(async () => (await t.get(`/v1/databases/${db.id}`)).body.size_bytes > 0, 30_000);
    const backup = await backUp(account.id, ['databases']);
    await query("DELETE FROM items WHERE id = 1; INSERT INTO items VALUES (9, 'x')");
    expect(await rows()).not.toBe(before);
    await restore(backup);
    expect(await rows()).toBe(before);
  }, 180_000);

  it("a cron job of an account on server 1 runs there, as the account's user in its home there, and its run comes back through the agent", async () => {
    const server = servers[0] as WebServer;
    const account = await createAccount(t, (await createPlan(t)).id, undefined, { placement: { web: server.id } });
    const jobs = `/v1/accounts/${account.id}/cron-jobs`;
    const job = await t.post(jobs, { name: 'where', schedule: '@daily', command: { shell: 'id -un > ran.txt; pwd >> ran.txt' } });
    expect(job.status, job.text).toBe(201);
    await eventually(async () => (await t.get(`${jobs}/${job.body.id}`)).body.sync_state === 'in_sync');
    expect(readFileSync(`/etc/cron.d/berth-${account.username}`, 'utf8')).toContain(`${server.dataDir}/cron/run ${job.body.id}`);
    const run = await t.post(`${jobs}/${job.body.id}/run`);
    expect(run.status, run.text).toBe(202);
    const ended = await eventually(async () => {
      const r = (await t.get(`${jobs}/${job.body.id}/runs`)).body.data[0];
      return r?.status !== 'running' && r;
    }, 60_000);
    expect(ended).toMatchObject({ id: run.body.id, status: 'succeeded', exit_code: 0 });
    const home = loginHome(path.join(server.dataDir, 'accounts', account.id));
    expect(readFileSync(path.join(home, 'ran.txt'), 'utf8')).toBe(`berth-${account.username}\n${home}\n`);
    // Terminated, the account's file leaves the machine's cron with it.
    expect((await t.request('DELETE', `/v1/accounts/${account.id}`)).status).toBe(202);
    await eventually(async () => !readdirSync('/etc/cron.d').includes(`berth-${account.username}`));
  }, 120_000);

  it('an account on server 1 logs in over SSH there, as its user in its login home there; its key leaves with the account', async () => {
    const server = servers[0] as WebServer;
    const plan = await createPlan(t, undefined, { ssh_access: 'shell' });
    const account = await createAccount(t, plan.id, undefined, { placement: { web: server.id } });
    const keys = mkdtempSync(path.join(tmpdir(), 'berth-fleet-keys-'));
    dirs.push(keys);
    const key = await sshKeyPair(keys, 'fleet');
    expect((await t.post(`/v1/accounts/${account.id}/ssh-keys`, { name: 'k', public_key: key.public })).status).toBe(201);
    const put = await t.put(`/v1/accounts/${account.id}/ssh`, { access: 'shell' });
    expect(put.body).toMatchObject({ host: server.address, username: `berth-${account.username}` });
    await eventually(async () => (await t.get(`/v1/accounts/${account.id}/ssh`)).body.sync_state === 'in_sync');
    const who = await sshCommand(key.file, put.body.username, 'id -un; pwd');
    expect(who.stdout).toBe(`${put.body.username}\n${loginHome(path.join(server.dataDir, 'accounts', account.id))}\n`);
    expect((await t.request('DELETE', `/v1/accounts/${account.id}`)).status).toBe(202);
    await eventually(async () => (await sshCommand(key.file, put.body.username, 'true')).code !== 0);
  }, 120_000);
});
