import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentCall, agentDownload, agentUpload } from '../../src/agent/client.js';
import { enrol } from '../../src/agent/enrol.js';
import { runAgent } from '../../src/agent/run.js';
import type { Identity } from '../../src/agent/state.js';
import { listenAgents } from '../../src/app.js';
import { directoryBytes } from '../../src/lib/disk.js';
import { newId } from '../../src/lib/ids.js';
import { SYSTEM_TIME_ZONE } from '../../src/lib/time-zone.js';
import { relayedTask, runAgentTask, type ServerRow, serverStatus } from '../../src/modules/servers/index.js';
import { Relay } from '../../src/modules/servers/relay.js';
import { statusCondition } from '../../src/modules/servers/status.js';
import { pruneStaleTasks } from '../../src/modules/servers/tasks.js';
import { AGENT_UNITS_CHANNEL } from '../../src/modules/servers/wake.js';
import { agentHarness } from '../helpers/agents.js';
import { createTestApp, eventually, OPERATOR_TOKEN, type TestApp } from '../helpers/app.js';
import { members, tarGz } from '../helpers/archives.js';
import { createAccount, createPlan, createReseller } from '../helpers/fixtures.js';
import { freePort } from '../helpers/ports.js';
import { ed25519KeyLine } from '../helpers/ssh-keys.js';

/**
 * Hosting servers and their agents: the operator's API, placement, and the agent listener over
 * real mutual TLS on a loopback port, with the agent's own code (enrol, run) in this process and
 * the embedded database driver rendering into the agent's own data directory.
 */
let t: TestApp;
let url: string;
const LOCAL = 'srv_00000000000000000000000000';
const { newAgentDir, addServer, enrolledServer, agentDrivers, startAgent, removeDirs } = agentHarness(
  () => t,
  () => url,
);

const poll = (identity: Pick<Identity, 'ca_pem' | 'key_pem' | 'certificate_pem'>, query = 'wait=0') =>
  agentCall(url, identity, 'GET', `/agent/v1/units?${query}`, undefined, { headers: { 'berth-agent-version': '0.1.0' } });

/** A backup of the account, once it has ended (completed or failed). */
async function backUp(accountId: string, include: string[]) {
  const backup = await t.post('/v1/backups', { account_id: accountId, include });
  expect(backup.status, backup.text).toBe(202);
  return eventually(async () => {
    const b = (await t.get(`/v1/backups/${backup.body.id}`)).body;
    return ['completed', 'failed'].includes(b.status) ? b : null;
  });
}

/** The files in a backup's archive, by path. */
async function archived(backupId: string) {
  const archive = await t.app.inject({
    method: 'GET',
    url: `/v1/backups/${backupId}/download`,
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
  });
  return members(archive.rawPayload);
}

beforeAll(async () => {
  t = await createTestApp({ env: { BERTH_AGENT_LISTEN: '127.0.0.1:0' } });
  url = `https://127.0.0.1:${await listenAgents(t.app, t.config)}`;
});
afterAll(async () => {
  await t.close();
  removeDirs();
});

describe('servers', () => {
  it('a fresh installation has the local server, online with every role', async () => {
    const r = await t.get(`/v1/servers/${LOCAL}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'local', local: true, status: 'online', roles: ['web', 'mail', 'database'] });
    expect(r.body.units).toMatchObject({ in_sync: expect.any(Number), pending: expect.any(Number), error: 0 });
    expect((await t.get('/v1/servers')).body.data.map((s: { id: string }) => s.id)).toContain(LOCAL);
  });

  it('a new server answers its one-use enrolment: the token once, and the exact command naming the CA', async () => {
    const server = await addServer();
    expect(server).toMatchObject({ status: 'pending_enrolment', local: false, placement: 'enabled', usage: { accounts: 0 } });
    const { token, command, expires_at } = server.enrolment;
    expect(command).toMatch(new RegExp(`^berth agent enrol --url ${url} --token ${token} --ca-fingerprint sha256:[0-9a-f]{64}$`));
    expect(token).toMatch(/^berth_enrol_[\w-]{43}$/);
    expect(new Date(expires_at).getTime() - Date.now()).toBeGreaterThan(59 * 60_000);
    expect((await t.get(`/v1/servers/${server.id}`)).body.enrolment).toBeUndefined();
    const replaced = await t.request('PUT', `/v1/servers/${server.id}`, {
      body: {
        name: server.name,
        roles: ['database', 'mail'],
        ipv4: '127.0.0.14',
        ipv6: null,
        capacity: { accounts: 5 },
        placement: 'disabled',
      },
      headers: { 'if-match': `"${server.version}"` },
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({
      roles: ['database', 'mail'],
      ipv4: '127.0.0.14',
      capacity: { accounts: 5 },
      placement: 'disabled',
    });
    expect(
      (await t.post('/v1/servers', { name: server.name, roles: ['web'], ipv4: '127.0.0.13', capacity: { accounts: 1 } })).body
        .code,
    ).toBe('already_exists');
  });

  it('is the operator’s alone: a reseller sees no server and cannot add one', async () => {
    const reseller = await createReseller(t);
    const token = (await t.post('/v1/tokens', { name: 'r', principal: { kind: 'reseller', id: reseller.id }, scopes: ['*'] }))
      .body.secret as string;
    expect((await t.get(`/v1/servers/${LOCAL}`, token)).status).toBe(404);
    expect((await t.get('/v1/servers', token)).status).toBe(403);
    expect(
      (await t.post('/v1/servers', { name: 'x', roles: ['web'], ipv4: '127.0.0.9', capacity: { accounts: 1 } }, token)).status,
    ).toBe(403);
    expect((await t.post(`/v1/servers/${LOCAL}/enrolment`, undefined, token)).status).toBe(404);
  });

  it('enrols once: the token cannot be used again, a guessed one is refused, a wrong fingerprint is never sent the token', async () => {
    const { server, identity, fingerprint, dataDir } = await enrolledServer();
    expect(identity.server_id).toBe(server.id);
    const keyFile = path.join(dataDir, 'agent', 'identity.json');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    await expect(
      enrol({ url, token: server.enrolment.token, caFingerprint: fingerprint, dataDir: newAgentDir() }),
    ).rejects.toThrow(/refused \(401\)/);
    await expect(
      enrol({ url, token: 'berth_enrol_guessed', caFingerprint: fingerprint, dataDir: newAgentDir() }),
    ).rejects.toThrow(/refused \(401\)/);
    const other = await addServer();
    await expect(
      enrol({ url, token: other.enrolment.token, caFingerprint: `sha256:${'0'.repeat(64)}`, dataDir: newAgentDir() }),
    ).rejects.toThrow(/not the one named/);
    // The token of that server was not spent: the right fingerprint enrols it.
    await expect(
      enrol({ url, token: other.enrolment.token, caFingerprint: fingerprint, dataDir: newAgentDir() }),
    ).resolves.toMatchObject({
      server_id: other.id,
    });
  });

  it('failed enrolments are slowed down per address; a valid token still enrols', async () => {
    const strict = await createTestApp({ env: { BERTH_AGENT_LISTEN: '127.0.0.1:0', BERTH_AUTH_FAILURES_PER_MINUTE: '3' } });
    try {
      const at = `https://127.0.0.1:${await listenAgents(strict.app, strict.config)}`;
      const created = await strict.post('/v1/servers', {
        name: 'strict',
        roles: ['database'],
        ipv4: '127.0.0.13',
        capacity: { accounts: 1 },
      });
      expect(created.status, created.text).toBe(201);
      const server = created.body;
      const fingerprint = /--ca-fingerprint (\S+)/.exec(server.enrolment.command)?.[1] as string;
      const guess = (i: number) =>
        enrol({ url: at, token: `berth_enrol_guess${i}`, caFingerprint: fingerprint, dataDir: newAgentDir() }).then(
          () => 'enrolled',
          (e: Error) => e.message,
        );
      const guesses: string[] = [];
      for (let i = 0; i < 4; i++) guesses.push(await guess(i));
      expect(guesses.slice(0, 3).every((m) => m.includes('(401)'))).toBe(true);
      expect(guesses[3]).toContain('(429)');
      const identity = await enrol({
        url: at,
        token: server.enrolment.token,
        caFingerprint: fingerprint,
        dataDir: newAgentDir(),
      });
      expect(identity.server_id).toBe(server.id);
    } finally {
      await strict.close();
    }
  });

  it('an expired enrolment token is refused', async () => {
    const server = await addServer();
    const fingerprint = /--ca-fingerprint (\S+)/.exec(server.enrolment.command)?.[1] as string;
    t.clock.advance(61 * 60_000);
    try {
      await expect(
        enrol({ url, token: server.enrolment.token, caFingerprint: fingerprint, dataDir: newAgentDir() }),
      ).rejects.toThrow(/401/);
    } finally {
      t.clock.advance(-61 * 60_000);
    }
  });

  it('the listener takes only the current client certificate: no certificate, a user token or a revoked one is refused', async () => {
    const { server, identity, fingerprint } = await enrolledServer();
    expect((await poll(identity)).status).toBe(200);
    expect((await t.get(`/v1/servers/${server.id}`)).body).toMatchObject({ status: 'online', agent_version: '0.1.0' });
    const anonymous = await agentCall(url, { ca_pem: identity.ca_pem }, 'GET', '/agent/v1/units?wait=0', undefined, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(anonymous.status).toBe(401);
    // A new enrolment: the old certificate works until the new token is spent, then never again.
    const renewed = await t.post(`/v1/servers/${server.id}/enrolment`);
    expect(renewed.status).toBe(200);
    expect((await poll(identity)).status).toBe(200);
    const next = await enrol({ url, token: renewed.body.enrolment.token, caFingerprint: fingerprint, dataDir: newAgentDir() });
    expect((await poll(identity)).status).toBe(401);
    expect((await poll(next)).status).toBe(200);
  });

  it('a list filtered by status pages over the servers that have it', async () => {
    await addServer();
    for (const status of ['pending_enrolment', 'online']) {
      const page = await t.get(`/v1/servers?status=${status}&limit=1`);
      expect(page.status).toBe(200);
      expect(page.body.data.map((s: { status: string }) => s.status)).toEqual([status]);
    }
    const all = (await t.get('/v1/servers?status=unreachable&limit=200')).body.data;
    expect(all.every((s: { status: string }) => s.status === 'unreachable')).toBe(true);
  });

  it('a server’s status is the same rule in the API’s answers and in its filter, for every kind of server', async () => {
    const now = t.clock.now();
    const seen = [null, new Date(now.getTime() - 10_000), new Date(now.getTime() - 90_000), new Date(now.getTime() - 91_000)];
    const ids: string[] = [LOCAL];
    for (const enrolled of [false, true])
      for (const draining of [false, true])
        for (const [i, lastSeen] of seen.entries()) {
          const id = `srv_status${Number(enrolled)}${Number(draining)}${i}0000000000000000`;
          ids.push(id);
          await t.db.query(
            `INSERT INTO servers (id, name, roles, capacity_accounts, enrolled, draining, last_seen_at)
             VALUES ($1, $1, '{web}', 1, $2, $3, $4)`,
            [id, enrolled, draining, lastSeen],
          );
        }
    try {
      for (const status of ['pending_enrolment', 'online', 'unreachable', 'draining', 'decommissioned'] as const) {
        const params: unknown[] = [ids];
        const where = statusCondition(status, now, params);
        // The condition and the row in one statement: the drain loop decommissions an empty
        // draining server whenever it runs, and a row read before it did would disagree.
        const rows = (
          await t.db.query<ServerRow & { matches: boolean | null }>(
            `SELECT *, (${where}) AS matches FROM servers WHERE id = ANY($1)`,
            params,
          )
        ).rows;
        const filtered = rows.filter((r) => r.matches).map((r) => r.id);
        const derived = rows.filter((r) => serverStatus(r, now) === status).map((r) => r.id);
        expect(filtered.sort(), status).toEqual(derived.sort());
      }
    } finally {
      await t.db.query('DELETE FROM servers WHERE id = ANY($1) AND id <> $2', [ids, LOCAL]);
    }
  });

  it('the agent renews its client certificate at two thirds of its life; the old one is refused from then on', async () => {
    const DAY = 86_400_000;
    // Enrolled 25 of its 30 days ago, as far as the certificate says.
    t.clock.advance(-25 * DAY);
    const enrolled = await enrolledServer().finally(() => t.clock.advance(25 * DAY));
    const { identity, dataDir } = enrolled;
    const stop = startAgent(dataDir, identity);
    try {
      const saved = await eventually(async () => {
        const kept = JSON.parse(readFileSync(path.join(dataDir, 'agent', 'identity.json'), 'utf8')) as Identity;
        return kept.certificate_pem !== identity.certificate_pem ? kept : null;
      });
      expect(saved.key_pem).not.toBe(identity.key_pem);
      expect((await poll(identity)).status).toBe(401);
      expect((await poll(saved)).status).toBe(200);
    } finally {
      await stop();
    }
  });

  it('an agent that cannot reach the control plane backs off (1, 2, 4 … 30 s) rather than retrying at once', async () => {
    const { identity, dataDir } = await enrolledServer();
    const closed = `https://127.0.0.1:${await freePort()}`;
    const attempts: number[] = [];
    const controller = new AbortController();
    const started = Date.now();
    const running = runAgent(
      {
        dataDir,
        identity: { ...identity, url: closed },
        drivers: agentDrivers(dataDir),
        version: '0.1.0',
        diskBytesUsed: async () => 0,
        log: (m) => m.startsWith('agent:') && attempts.push(Date.now() - started),
      },
      controller.signal,
    );
    await eventually(async () => attempts.length >= 3);
    controller.abort();
    await running;
    // A refused connection fails at once: only the waits between attempts space them.
    const [a, b, c] = attempts as [number, number, number];
    expect(b - a).toBeGreaterThanOrEqual(900);
    expect(c - b).toBeGreaterThanOrEqual(1900);
  });

  it('a certificate another CA signed is cut off at the handshake', async () => {
    const { identity } = await enrolledServer();
    const foreign = await import('../../src/tls/internal-ca.js');
    const ca = await foreign.createCertificateAuthority('Not Berth', new Date());
    const { generateKey } = await import('../../src/tls/keys.js');
    const key = await generateKey();
    const csr = await foreign.certificateRequest(key, 'x');
    const signed = await foreign.signClientCertificate(ca, csr, identity.server_id, new Date(), 30);
    await expect(poll({ ca_pem: identity.ca_pem, key_pem: key, certificate_pem: signed.certificate_pem })).rejects.toThrow();
  });
});

describe('placement and the agent’s units', () => {
  it('an account placed on a server has its databases applied by that server’s agent, not in-process', async () => {
    const { server, identity, dataDir } = await enrolledServer();
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, { placement: { database: server.id } });
    expect(account.placement).toEqual({ web: LOCAL, mail: LOCAL, database: server.id });
    const db = await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_shop` });
    expect(db.status).toBe(201);
    // Not applied in-process: the control plane renders nothing for it.
    const local = path.join(t.dataDir, 'rendered', 'db', `${account.username}.sql`);
    const remote = path.join(dataDir, 'rendered', 'db', `${account.username}.sql`);
    const waiting = await eventually(async () => {
      const r = (await t.get(`/v1/servers/${server.id}`)).body;
      return r.units.pending === 1 ? r : null;
    });
    expect(Date.parse(waiting.units.oldest_pending_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(waiting.usage.accounts).toBe(1);

    // The agent's MariaDB, as far as backups go: what it dumped, and what it was given to load.
    const dumped: string[] = [];
    const loaded: string[] = [];
    const drivers = agentDrivers(dataDir);
    drivers.database.dump = async (database, out) => {
      dumped.push(database);
      out.end(`${database}: dumped on the agent`);
    };
    drivers.database.load = async (_database, dump) => void loaded.push(await text(dump));
    const stop = startAgent(dataDir, identity, drivers);
    try {
      await eventually(async () => (await t.get(`/v1/databases/${db.body.id}`)).body.sync_state === 'in_sync');
      expect(readFileSync(remote, 'utf8')).toContain(`${account.username}_shop`);
      expect(existsSync(local)).toBe(false);
      // A change wakes the long-poll at once (it waits up to 5 s here, far less is taken).
      const started = Date.now();
      const user = await t.post('/v1/database-users', {
        account_id: account.id,
        username: `${account.username}_app`,
        password: 'a-long-password-123',
      });
      expect(user.status, user.text).toBe(201);
      await eventually(async () => readFileSync(remote, 'utf8').includes(`${account.username}_app`));
      expect(Date.now() - started).toBeLessThan(4000);
      // The apply is reported after the file is written.
      const shown = await eventually(async () => {
        const r = (await t.get(`/v1/servers/${server.id}`)).body;
        return r.units.pending === 0 ? r : null;
      });
      expect(shown).toMatchObject({
        usage: { accounts: 1, disk_bytes: 1234 },
        units: { pending: 0, error: 0, oldest_pending_at: null },
      });
      expect((await t.request('DELETE', `/v1/servers/${server.id}`)).body).toMatchObject({
        code: 'server_not_empty',
        accounts: 1,
      });
      // Backed up: the dump is made by the agent and streamed here; restored: loaded by the agent.
      const backup = await t.post('/v1/backups', { account_id: account.id, include: ['databases'] });
      expect(backup.status, backup.text).toBe(202);
      const finished = async (id: string) =>
        eventually(async () => {
          const op = (await t.get(`/v1/operations/${id}`)).body;
          return ['succeeded', 'failed'].includes(op.status) ? op : null;
        });
      const made = await finished(backup.body.operation.id);
      expect(made.status, JSON.stringify(made.error)).toBe('succeeded');
      expect(dumped).toEqual([`${account.username}_shop`]);
      const restore = await t.post(`/v1/backups/${backup.body.id}/restore`, {});
      expect(restore.status, restore.text).toBe(202);
      const restored = await finished(restore.body.operation.id);
      expect(restored.status, JSON.stringify(restored.error)).toBe('succeeded');
      expect(loaded).toEqual([`${account.username}_shop: dumped on the agent`]);
      // Nothing of either is kept on the agent (the dump is loaded as it arrives), nor a task behind.
      expect(existsSync(path.join(dataDir, 'agent', 'tasks'))).toBe(false);
      expect((await t.db.query('SELECT 1 FROM agent_tasks')).rows).toHaveLength(0);
    } finally {
      await stop();
    }
  });

  it('an account placed on a web server has its sites served by that server’s agent: releases fetched, zone pointing at it, deletion settled by the report', async () => {
    const { server, identity, dataDir } = await enrolledServer({ roles: ['web'], ipv4: '127.0.0.11' });
    const other = await enrolledServer({ roles: ['web'] });
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, { placement: { web: server.id, database: LOCAL } });
    expect(account.placement).toEqual({ web: server.id, mail: LOCAL, database: LOCAL });
    const name = `${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    const records = (await t.get(`/v1/domains/${name}/records?type=A`)).body.data;
    expect(records.map((r: { name: string; content: string }) => `${r.name} ${r.content}`).sort()).toEqual([
      '@ 127.0.0.11',
      'www 127.0.0.11',
    ]);
    const site = await t.post('/v1/sites', { account_id: account.id, hostname: name });
    expect(site.status, site.text).toBe(202);
    const block = (dir: string) => path.join(dir, 'rendered', 'web', 'sites', `${site.body.id}.conf`);
    const files = path.join(dataDir, 'accounts', account.id, 'sites', site.body.id);
    // Nobody has served it yet: it waits for its server's agent.
    expect((await t.get(`/v1/operations/${site.body.operation.id}`)).body.status).not.toBe('succeeded');

    const stop = startAgent(dataDir, identity);
    try {
      await eventually(async () => {
        const s = (await t.get(`/v1/sites/${site.body.id}`)).body;
        return s.status === 'active' && s.sync_state === 'in_sync';
      });
      expect((await t.get(`/v1/operations/${site.body.operation.id}`)).body.status).toBe('succeeded');
      expect(readFileSync(block(dataDir), 'utf8')).toContain(`server_name ${name};`);
      expect(existsSync(block(t.dataDir))).toBe(false);

      const deployed = await t.request('POST', `/v1/sites/${site.body.id}/deployments`, {
        raw: tarGz([{ path: 'index.html', content: 'served by web-1' }]),
        headers: { 'content-type': 'application/gzip' },
      });
      expect(deployed.status, deployed.text).toBe(202);
      await eventually(async () => existsSync(path.join(files, 'current', 'index.html')));
      expect(readFileSync(path.join(files, 'current', 'index.html'), 'utf8')).toBe('served by web-1');
      await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.sync_state === 'in_sync');
      // The release is the unit's own server's to fetch.
      const artifact = `/agent/v1/units/web/${site.body.id}/artifacts/${deployed.body.id}`;
      expect((await agentCall(url, other.identity, 'GET', artifact)).status).toBe(403);
      expect((await agentCall(url, identity, 'GET', artifact.replace(deployed.body.id, site.body.id))).status).toBe(404);

      // A backup takes the site's files as its server serves them, with what the site wrote there since.
      writeFileSync(path.join(files, 'current', 'upload.txt'), 'written on web-1');
      const made = await backUp(account.id, ['sites']);
      expect(made.status, JSON.stringify(made.error)).toBe('completed');
      const inside = await archived(made.id);
      expect(inside.get(`sites/${site.body.id}/upload.txt`)?.toString()).toBe('written on web-1');
      expect(inside.get(`sites/${site.body.id}/index.html`)?.toString()).toBe('served by web-1');

      const removed = await t.request('DELETE', `/v1/sites/${site.body.id}`);
      expect(removed.status, removed.text).toBe(202);
      await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).status === 404);
      expect(existsSync(block(dataDir))).toBe(false);
      expect(existsSync(files)).toBe(false);
    } finally {
      await stop();
    }
  });

  it('an account placed on a mail server has its mail applied by that server’s agent: mailboxes, MX at that server, maildirs backed up and restored there, a deleted domain and a terminated account taken away', async () => {
    const { server, identity, dataDir } = await enrolledServer({ roles: ['mail'], ipv4: '127.0.0.13' });
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, { placement: { web: LOCAL, mail: server.id, database: LOCAL } });
    expect(account.placement).toEqual({ web: LOCAL, mail: server.id, database: LOCAL });
    const [name, second] = [`${account.username}.example.com`, `${account.username}.example.net`];
    for (const n of [name, second])
      expect((await t.post('/v1/domains', { account_id: account.id, name: n, mail_enabled: true })).status).toBe(201);
    // Mail for it goes to that server, by name.
    const records = (await t.get(`/v1/domains/${name}/records`)).body.data as { name: string; type: string; content: string }[];
    expect(records.filter((r) => r.type === 'MX').map((r) => r.content)).toEqual([`10 mail.${name}.`]);
    expect(records.find((r) => r.name === 'mail' && r.type === 'A')?.content).toBe('127.0.0.13');
    const box = await t.post('/v1/emails', { address: `info@${name}`, password: 'a long enough passphrase', quota_mb: 10 });
    expect(box.status, box.text).toBe(201);
    await t.post('/v1/emails', { address: `sales@${second}`, password: 'a long enough passphrase', quota_mb: 10 });
    const passwd = path.join(dataDir, 'rendered', 'mail', 'passwd');
    const maildir = path.join(dataDir, 'accounts', account.id, 'mail', name, box.body.id, 'Maildir');
    const secondRoot = path.join(dataDir, 'accounts', account.id, 'mail', second);
    // Not applied in-process.
    await eventually(async () => (await t.get(`/v1/servers/${server.id}`)).body.units.pending >= 1);
    expect(existsSync(path.join(t.dataDir, 'accounts', account.id, 'mail'))).toBe(false);

    const stop = startAgent(dataDir, identity);
    try {
      await eventually(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync');
      expect(readFileSync(passwd, 'utf8')).toMatch(new RegExp(`^info@${name}:\\{ARGON2ID\\}`, 'm'));
      expect(existsSync(maildir)).toBe(true);
      // The signing key of the domain is the server's to hold, 0600.
      const key = path.join(dataDir, 'rendered', 'mail', 'dkim', `${name}.private`);
      expect(statSync(key).mode & 0o777).toBe(0o600);

      // Backed up as the server holds it (a message delivered there), and put back there.
      const message = path.join(maildir, 'new', '1700000000.M1P1.mx');
      writeFileSync(message, 'Subject: kept\r\n\r\nhello\r\n');
      const made = await backUp(account.id, ['emails']);
      expect(made.status, JSON.stringify(made.error)).toBe('completed');
      expect((await archived(made.id)).get(`mail/${name}/${box.body.id}/Maildir/new/1700000000.M1P1.mx`)?.toString()).toContain(
        'hello',
      );
      rmSync(message);
      expect((await t.request('DELETE', `/v1/emails/${box.body.id}`)).status).toBe(204);
      await eventually(async () => !existsSync(maildir));
      const restore = await t.post(`/v1/backups/${made.id}/restore`, {});
      expect(restore.status, restore.text).toBe(202);
      const restored = await eventually(async () => {
        const op = (await t.get(`/v1/operations/${restore.body.operation.id}`)).body;
        return ['succeeded', 'failed'].includes(op.status) ? op : null;
      });
      expect(restored.status, JSON.stringify(restored.error)).toBe('succeeded');
      await eventually(async () => existsSync(message) && readFileSync(passwd, 'utf8').includes(`info@${name}`));
      expect(readFileSync(message, 'utf8')).toContain('hello');

      // A deleted domain is taken off the server: its maps and its maildirs.
      expect((await t.request('DELETE', `/v1/domains/${second}?cascade=true`)).status).toBe(204);
      await eventually(async () => !readFileSync(passwd, 'utf8').includes(`@${second}`) && !existsSync(secondRoot));
      await eventually(async () => (await t.db.query('SELECT 1 FROM mail_removals')).rows.length === 0);

      // A terminated account's mail goes with its withdrawal.
      expect((await t.request('DELETE', `/v1/accounts/${account.id}`)).status).toBe(202);
      await eventually(async () => !readFileSync(passwd, 'utf8').includes(`@${name}`) && !existsSync(maildir));
      await eventually(
        async () => (await t.db.query('SELECT 1 FROM agent_withdrawals WHERE account_id = $1', [account.id])).rows.length === 0,
      );
    } finally {
      await stop();
    }
  });

  it('what a server holds counts in the usage: its agent measures sites, mailboxes and databases there; another server’s measurements change nothing', async () => {
    const { server, identity, dataDir } = await enrolledServer({ roles: ['web', 'mail', 'database'] });
    const other = await enrolledServer({ roles: ['web', 'mail', 'database'] });
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, {
      placement: { web: server.id, mail: server.id, database: server.id },
    });
    const name = `${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).status).toBe(201);
    const box = await t.post('/v1/emails', { address: `info@${name}`, password: 'a long enough passphrase', quota_mb: 10 });
    expect(box.status, box.text).toBe(201);
    const database = await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_shop` });
    expect(database.status, database.text).toBe(201);
    const site = await t.post('/v1/sites', { account_id: account.id, hostname: name });
    expect(site.status, site.text).toBe(202);

    // The server's MariaDB, as its meter sees it: the account's database, and one that is not its.
    const drivers = agentDrivers(dataDir);
    drivers.database.measure = async () =>
      new Map([
        [`${account.username}_shop`, 81_920],
        ['someone_else', 1],
      ]);
    const stop = startAgent(dataDir, identity, drivers, 1, 0);
    try {
      await eventually(async () => (await t.get(`/v1/sites/${site.body.id}`)).body.status === 'active');
      const deployed = await t.request('POST', `/v1/sites/${site.body.id}/deployments`, {
        raw: tarGz([{ path: 'index.html', content: 'served by the server' }]),
        headers: { 'content-type': 'application/gzip' },
      });
      expect(deployed.status, deployed.text).toBe(202);
      const files = path.join(dataDir, 'accounts', account.id, 'sites', site.body.id);
      await eventually(async () => existsSync(path.join(files, 'current', 'index.html')));
      writeFileSync(path.join(files, 'current', 'upload.bin'), randomBytes(200_000));
      const maildir = path.join(dataDir, 'accounts', account.id, 'mail', name, box.body.id, 'Maildir');
      await eventually(async () => existsSync(path.join(maildir, 'new')));
      writeFileSync(path.join(maildir, 'new', '1700000000.M1P1.mx'), randomBytes(50_000));

      await eventually(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.usage_bytes >= 50_000);
      await eventually(async () => (await t.get(`/v1/databases/${database.body.id}`)).body.size_bytes === 81_920);
      const mailbox = (await t.get(`/v1/emails/${box.body.id}`)).body.usage_bytes;
      // The release counts once (the control plane's copy), what the site wrote into it once more.
      const here = await directoryBytes(path.join(t.dataDir, 'accounts', account.id));
      const usage = await eventually(async () => {
        const u = (await t.get(`/v1/accounts/${account.id}`)).body.usage;
        return u.disk_bytes === here + 200_000 + mailbox + 81_920 ? u : null;
      });

      // Another server naming this account's mailbox, site and database records nothing.
      const sent = await agentCall(url, other.identity, 'POST', '/agent/v1/usage', {
        measurements: [
          { kind: 'mail', key: box.body.id, bytes: 1 },
          { kind: 'web', key: site.body.id, bytes: 1 },
          { kind: 'database', key: `${account.username}_shop`, bytes: 1 },
        ],
      });
      expect(sent.status, sent.text).toBe(204);
      expect((await t.get(`/v1/accounts/${account.id}`)).body.usage.disk_bytes).toBe(usage.disk_bytes);
      expect((await t.get(`/v1/emails/${box.body.id}`)).body.usage_bytes).toBe(mailbox);
      // A measurement that is not one is refused whole.
      const bad = await agentCall(url, identity, 'POST', '/agent/v1/usage', {
        measurements: [{ kind: 'mail', key: box.body.id, bytes: -1 }],
      });
      expect(bad.status).toBe(422);
      expect((await t.get(`/v1/emails/${box.body.id}`)).body.usage_bytes).toBe(mailbox);
    } finally {
      await stop();
    }
  });

  it('what an agent sends back is bounded and checked: maildirs beyond twice the disk quota fail the backup, a release not live there fails its packing', async () => {
    const { server, identity, dataDir } = await enrolledServer({ roles: ['mail', 'web'] });
    const plan = await createPlan(t, undefined, { disk_quota_mb: 1 });
    const account = await createAccount(t, plan.id, undefined, {
      placement: { web: server.id, mail: server.id, database: LOCAL },
    });
    const name = `${account.username}.example.org`;
    expect((await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).status).toBe(201);
    const box = await t.post('/v1/emails', { address: `big@${name}`, password: 'a long enough passphrase', quota_mb: 1 });
    expect(box.status, box.text).toBe(201);
    const stop = startAgent(dataDir, identity);
    try {
      await eventually(async () => (await t.get(`/v1/emails/${box.body.id}`)).body.sync_state === 'in_sync');
      // 5 MiB of mail where the account may hold 1 MiB: more than the control plane takes (2 MiB
      // of files): the unpacking as it arrives stops at the member that passes it, and the
      // agent's report of the refusal fails the backup at once, storing nothing.
      const inbox = path.join(dataDir, 'accounts', account.id, 'mail', name, box.body.id, 'Maildir', 'new');
      writeFileSync(path.join(inbox, '1.M1.big'), randomBytes(5 * 2 ** 20));
      const made = await backUp(account.id, ['emails']);
      expect(made).toMatchObject({
        status: 'failed',
        error: { code: 'backup_failed', detail: expect.stringMatching(/413 The task's files exceed 2097152 bytes/) },
      });
      const stored = path.join(t.dataDir, 'backups');
      expect(existsSync(stored) ? readdirSync(stored).filter((f) => f.includes(made.id)) : []).toEqual([]);
      // 1.5 MiB is within it.
      writeFileSync(path.join(inbox, '1.M1.big'), randomBytes(1.5 * 2 ** 20));
      expect((await backUp(account.id, ['emails'])).status).toBe('completed');

      const pack = runAgentTask(
        t.db,
        t.clock,
        server.id,
        {
          action: 'site.pack',
          account_id: account.id,
          site_id: 'sit_00000000000000000000000000',
          release: 'dep_00000000000000000000000000',
        },
        { file: path.join(newAgentDir(), 'release.tar.gz') },
      );
      await expect(pack).rejects.toThrow(/not live on this server/);
    } finally {
      await stop();
    }
  });

  it('a unit that fails on its server holds back no other: the failure is reported on it, the rest are applied; it is tried again until it applies', async () => {
    const { server, identity, dataDir } = await enrolledServer({ roles: ['web'] });
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, { placement: { web: server.id, database: LOCAL } });
    const ids: string[] = [];
    for (const label of ['broken', 'fine']) {
      const name = `${label}-${account.username}.example.com`;
      expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
      ids.push((await t.post('/v1/sites', { account_id: account.id, hostname: name })).body.id);
    }
    const [broken, fine] = ids as [string, string];
    const drivers = agentDrivers(dataDir);
    const web = drivers.web;
    let fault = true;
    drivers.web = Object.assign(Object.create(web), {
      applySite: async (site: { id: string }) => {
        if (site.id === broken && fault) throw new Error('nginx: configuration check failed');
        return web.applySite.call(web, site as never);
      },
    });
    // Polls that wait as long as in production: a retry does not come from a poll's end.
    const stop = startAgent(dataDir, identity, drivers, 30);
    try {
      await eventually(async () => (await t.get(`/v1/sites/${fine}`)).body.sync_state === 'in_sync');
      const failed = await eventually(async () => {
        const s = (await t.get(`/v1/sites/${broken}`)).body;
        return s.sync_state === 'error' ? s : null;
      });
      expect(failed).toMatchObject({ status: 'active', sync_error: expect.stringContaining('configuration check failed') });
      // Each gets its certificate (a change of its unit) too: counted once both have settled again.
      await eventually(async () => {
        const units = (await t.get(`/v1/servers/${server.id}`)).body.units;
        return units.in_sync === 1 && units.error === 1 && units.pending === 0;
      });
      // The fault goes (nginx is mended): without any change of the site, its next try applies it.
      fault = false;
      // Tried at most 10 s apart, where a poll without a change lasts 30 s.
      await eventually(async () => (await t.get(`/v1/sites/${broken}`)).body.sync_state === 'in_sync', 20_000);
    } finally {
      await stop();
    }
  });

  it('a unit that failed is tried again by its agent without any change, at most 10 s later: a database server back from a restart', async () => {
    const { server, identity, dataDir } = await enrolledServer();
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, { placement: { web: LOCAL, mail: LOCAL, database: server.id } });
    const created = await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_retry` });
    expect(created.status, created.text).toBe(201);
    const drivers = agentDrivers(dataDir);
    const database = drivers.database;
    let down = true;
    drivers.database = Object.assign(Object.create(database), {
      applyAccount: async (spec: never) => {
        if (down) throw new Error('mariadb: connection refused');
        return database.applyAccount.call(database, spec);
      },
    });
    // Polls that wait as long as in production (30 s): a retry does not come from a poll's end.
    const stop = startAgent(dataDir, identity, drivers, 30);
    try {
      await eventually(async () => (await t.get(`/v1/databases/${created.body.id}`)).body.sync_state === 'error');
      down = false;
      await eventually(async () => (await t.get(`/v1/databases/${created.body.id}`)).body.sync_state === 'in_sync', 20_000);
    } finally {
      await stop();
    }
  });

  it('an account placed on a web server has its cron jobs applied and run by that server’s agent; their runs come back through it', async () => {
    const { server, identity, dataDir } = await enrolledServer({ roles: ['web'] });
    const account = await createAccount(t, (await createPlan(t)).id, undefined, { placement: { web: server.id } });
    const job = await t.post(`/v1/accounts/${account.id}/cron-jobs`, {
      name: 'nightly',
      schedule: '@daily',
      command: { argv: ['true'] },
    });
    expect(job.status, job.text).toBe(201);
    const file = (dir: string) => path.join(dir, 'rendered', 'cron.d', `berth-${account.username}`);
    const runs = () => t.get(`/v1/accounts/${account.id}/cron-jobs/${job.body.id}/runs`);
    const stop = startAgent(dataDir, identity);
    try {
      await eventually(
        async () => (await t.get(`/v1/accounts/${account.id}/cron-jobs/${job.body.id}`)).body.sync_state === 'in_sync',
      );
      expect(readFileSync(file(dataDir), 'utf8')).toContain(`root ${path.join(dataDir, 'cron', 'run')} ${job.body.id}`);
      // Its schedule runs in the zone the server's agent reports.
      const zone = (await t.get(`/v1/servers/${server.id}`)).body.timezone;
      expect(zone).toBe(SYSTEM_TIME_ZONE);
      expect((await t.get(`/v1/accounts/${account.id}/cron-jobs/${job.body.id}`)).body).toMatchObject({ timezone: zone });
      expect(existsSync(file(t.dataDir))).toBe(false);
      // A manual run is handed to the agent; its driver (embedded here) records it skipped, and
      // the record reaches the API with the agent's next poll.
      const run = await t.post(`/v1/accounts/${account.id}/cron-jobs/${job.body.id}/run`);
      expect(run.status, run.text).toBe(202);
      const seen = await eventually(async () => (await runs()).body.data.find((r: { status: string }) => r.status !== 'running'));
      expect(seen).toMatchObject({ id: run.body.id, status: 'skipped', reason: expect.stringMatching(/no cron driver/) });
      await eventually(async () => readdirSync(path.join(dataDir, 'cron', 'runs')).length === 0);
    } finally {
      await stop();
    }
    // A run of the job sent by another server changes nothing (that server forgets it).
    const other = await enrolledServer({ roles: ['web'] });
    const now = new Date().toISOString();
    const forged = { id: newId('crn'), job_id: job.body.id, trigger: 'schedule', status: 'failed', started_at: now };
    const sent = await agentCall(url, other.identity, 'POST', '/agent/v1/cron-runs', {
      runs: [{ ...forged, finished_at: now, exit_code: 1, output_tail: '', reason: null }],
    });
    expect(sent).toMatchObject({ status: 200, body: { stored: [forged.id] } });
    // A zone the runtime does not know is not recorded.
    await agentCall(url, other.identity, 'GET', '/agent/v1/units?wait=0', undefined, {
      headers: { 'berth-agent-version': '0.1.0', 'berth-agent-timezone': 'Mars/Olympus_Mons' },
    });
    expect((await t.get(`/v1/servers/${other.server.id}`)).body).toMatchObject({ status: 'online', timezone: null });
    expect((await runs()).body.data.map((r: { id: string }) => r.id)).not.toContain(forged.id);
  });

  it("an account placed on a web server has its SSH access and keys applied by that server's agent, and taken away with the account", async () => {
    const { server, identity, dataDir } = await enrolledServer({ roles: ['web'] });
    const account = await createAccount(t, (await createPlan(t)).id, undefined, { placement: { web: server.id } });
    const key = ed25519KeyLine();
    expect((await t.post(`/v1/accounts/${account.id}/ssh-keys`, { name: 'k', public_key: key })).status).toBe(201);
    const put = await t.put(`/v1/accounts/${account.id}/ssh`, { access: 'sftp' });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ host: '127.0.0.12', username: `berth-${account.username}` });
    const keyFile = (dir: string) => path.join(dir, 'rendered', 'ssh', 'berth', 'keys', `berth-${account.username}`);
    const stop = startAgent(dataDir, identity);
    try {
      await eventually(async () => (await t.get(`/v1/accounts/${account.id}/ssh`)).body.sync_state === 'in_sync');
      expect(readFileSync(keyFile(dataDir), 'utf8')).toContain(`restrict ${key.split(' ').slice(0, 2).join(' ')}`);
      expect(existsSync(keyFile(t.dataDir))).toBe(false);
      // A login its sshd accepted is the key's last use; the same login reported by another server is not.
      const shown = (await t.get(`/v1/accounts/${account.id}/ssh-keys`)).body.data[0];
      const login = { user: `berth-${account.username}`, fingerprint_sha256: shown.fingerprint_sha256 };
      const other = await enrolledServer({ roles: ['web'] });
      const at = (iso: string) => ({ logins: [{ ...login, at: iso }] });
      expect((await agentCall(url, other.identity, 'POST', '/agent/v1/ssh-logins', at('2026-11-28T09:00:00.000Z'))).status).toBe(
        204,
      );
      expect((await t.get(`/v1/accounts/${account.id}/ssh-keys/${shown.id}`)).body.last_used_at).toBeNull();
      expect((await agentCall(url, identity, 'POST', '/agent/v1/ssh-logins', at('2026-11-28T10:00:00.000Z'))).status).toBe(204);
      expect((await agentCall(url, identity, 'POST', '/agent/v1/ssh-logins', at('2026-11-28T08:00:00.000Z'))).status).toBe(204);
      expect((await t.get(`/v1/accounts/${account.id}/ssh-keys/${shown.id}`)).body.last_used_at).toBe('2026-11-28T10:00:00.000Z');
      expect((await agentCall(url, identity, 'POST', '/agent/v1/ssh-logins', { logins: [{ ...login, at: 'x' }] })).status).toBe(
        422,
      );
      expect((await t.request('DELETE', `/v1/accounts/${account.id}`)).status).toBe(202);
      await eventually(async () => !existsSync(keyFile(dataDir)));
    } finally {
      await stop();
    }
  });

  it('a terminated account is withdrawn from its server by the agent: sites, databases and files, and not re-applied after a restart', async () => {
    const { server, identity, dataDir } = await enrolledServer({ roles: ['web', 'database'] });
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, {
      placement: { web: server.id, mail: LOCAL, database: server.id },
    });
    const name = `gone-${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name })).status).toBe(201);
    const site = (await t.post('/v1/sites', { account_id: account.id, hostname: name })).body;
    const db = (await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_db` })).body;
    const rendered = path.join(dataDir, 'rendered', 'db', `${account.username}.sql`);
    const block = path.join(dataDir, 'rendered', 'web', 'sites', `${site.id}.conf`);
    const home = path.join(dataDir, 'accounts', account.id);
    let stop = startAgent(dataDir, identity);
    try {
      await eventually(async () => (await t.get(`/v1/databases/${db.id}`)).body.sync_state === 'in_sync');
      await eventually(async () => (await t.get(`/v1/sites/${site.id}`)).body.sync_state === 'in_sync');
      expect(existsSync(rendered) && existsSync(block) && existsSync(home)).toBe(true);
      expect((await t.request('DELETE', `/v1/accounts/${account.id}`)).status).toBe(202);
      await eventually(async () => !existsSync(rendered) && !existsSync(block) && !existsSync(home));
      await eventually(
        async () => (await t.db.query('SELECT 1 FROM agent_withdrawals WHERE account_id = $1', [account.id])).rows.length === 0,
      );
    } finally {
      await stop();
    }
    // Started again, it re-applies what it keeps before it polls: nothing of the account comes back.
    const seen = (await t.get(`/v1/servers/${server.id}`)).body.last_seen_at;
    t.clock.advance(1000);
    stop = startAgent(dataDir, identity);
    try {
      await eventually(async () => (await t.get(`/v1/servers/${server.id}`)).body.last_seen_at !== seen);
      expect(existsSync(rendered) || existsSync(block)).toBe(false);
    } finally {
      await stop();
    }
  });

  it('a task’s bytes are its own server’s to send and fetch: another server gets 403, a name the task does not have 404', async () => {
    const a = await enrolledServer();
    const b = await enrolledServer();
    const id = 'tsk_01m8f000000000000000000000';
    const file = path.join(newAgentDir(), 'dump.sql');
    await t.db.query('INSERT INTO agent_tasks (id, server_id, spec, file) VALUES ($1, $2, $3, $4)', [
      id,
      a.server.id,
      { action: 'database.dump', database: 'x_db' },
      file,
    ]);
    try {
      const put = (identity: Identity, name: string) =>
        agentUpload(url, identity, `/agent/v1/units/task/${id}/artifacts/${name}`, Readable.from([Buffer.from('rows')])).then(
          () => 204,
          (e: Error) => Number(/: (\d{3}) /.exec(e.message)?.[1]),
        );
      expect(await put(b.identity, 'output')).toBe(403);
      expect(await put(a.identity, 'input')).toBe(404);
      expect((await agentCall(url, b.identity, 'GET', `/agent/v1/units/task/${id}/artifacts/input`)).status).toBe(403);
      expect(existsSync(file)).toBe(false);
      expect(await put(a.identity, 'output')).toBe(204);
      expect(readFileSync(file, 'utf8')).toBe('rows');
    } finally {
      await t.db.query('DELETE FROM agent_tasks WHERE id = $1', [id]);
    }
  });

  /** A server's pack task whose output is unpacked into `dir` as it arrives, as a move's copy makes one. */
  async function unpackingTask(id: string, maxBytes: number) {
    const a = await enrolledServer();
    const dir = path.join(newAgentDir(), 'copy', 'site');
    const spec = { action: 'site.pack', account_id: 'acc_1', site_id: 'sit_1', release: 'dep_1' };
    await t.db.query('INSERT INTO agent_tasks (id, server_id, spec, file, max_bytes, unpack) VALUES ($1, $2, $3, $4, $5, true)', [
      id,
      a.server.id,
      spec,
      dir,
      maxBytes,
    ]);
    return { a, dir, output: `/agent/v1/units/task/${id}/artifacts/output` };
  }

  it('a pack’s archive is unpacked as it arrives, where its task says: a member leading outside is the agent’s 422 and nothing is kept', async () => {
    const id = 'tsk_01m8f000000000000000000001';
    const { a, dir, output } = await unpackingTask(id, 2 ** 20);
    try {
      const put = (entries: Parameters<typeof tarGz>[0]) =>
        agentUpload(url, a.identity, output, Readable.from([tarGz(entries)])).then(
          () => 204,
          (e: Error) => e.message,
        );
      expect(await put([{ path: '../escaped.html', content: 'x' }])).toMatch(
        /422 The task's archive was refused: .*escaped\.html.*leads outside/,
      );
      expect(existsSync(dir) || existsSync(path.join(dir, '..', 'escaped.html'))).toBe(false);
      expect(await put([{ path: 'index.html', content: 'here' }])).toBe(204);
      expect(readFileSync(path.join(dir, 'index.html'), 'utf8')).toBe('here');
    } finally {
      await t.db.query('DELETE FROM agent_tasks WHERE id = $1', [id]);
    }
  });

  it('a pack’s upload cut off half-way leaves nothing of its unpacking', async () => {
    const id = 'tsk_01m8f000000000000000000002';
    const { a, dir, output } = await unpackingTask(id, 2 ** 30);
    try {
      const archive = tarGz([{ path: 'large.bin', content: randomBytes(4 * 2 ** 20) }]);
      const body = new Readable({ read: () => undefined });
      body.push(archive.subarray(0, archive.length / 2));
      const upload = agentUpload(url, a.identity, output, body).catch((e: Error) => e);
      await eventually(async () => existsSync(dir));
      body.destroy(new Error('connection lost'));
      expect(await upload).toBeInstanceOf(Error);
      await eventually(async () => !existsSync(dir));
    } finally {
      await t.db.query('DELETE FROM agent_tasks WHERE id = $1', [id]);
    }
  });

  it('a dump that fails half-way through an agent is the waiter’s error, and nothing of what it sent is kept', async () => {
    const a = await enrolledServer();
    const drivers = agentDrivers(a.dataDir);
    drivers.database.dump = async (_database, out) => {
      out.write('CREATE TABLE items'.repeat(10_000));
      const err = new Error('mariadb-dump exited with 2: Lost connection');
      out.destroy(err);
      throw err;
    };
    const stop = startAgent(a.dataDir, a.identity, drivers);
    const file = path.join(newAgentDir(), 'dump.sql');
    try {
      await eventually(async () => (await t.get(`/v1/servers/${a.server.id}`)).body.status === 'online');
      const dump = runAgentTask(t.db, t.clock, a.server.id, { action: 'database.dump', database: 'x_db' }, { file });
      await expect(dump).rejects.toThrow(/could not do it: mariadb-dump exited with 2: Lost connection/);
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.partial`)).toBe(false);
    } finally {
      await stop();
    }
  });

  it('a task ends with its agent’s report: a failure is the waiter’s error, a repeated report changes nothing; a quiet server fails the wait', async () => {
    const a = await enrolledServer();
    await poll(a.identity);
    const dump = () =>
      runAgentTask(
        t.db,
        t.clock,
        a.server.id,
        { action: 'database.dump', database: 'x_db' },
        { file: path.join(newAgentDir(), 'dump.sql') },
      );
    const outcome = dump().then(
      () => 'done',
      (e: Error) => e.message,
    );
    const unit = await eventually(async () =>
      (await poll(a.identity)).body?.units?.find((u: { kind: string }) => u.kind === 'task'),
    );
    const report = () =>
      agentCall(url, a.identity, 'POST', '/agent/v1/reports', {
        reports: [{ kind: 'task', key: unit.key, generation: 1, error: 'Unknown database x_db' }],
      });
    expect((await report()).status).toBe(204);
    expect(await outcome).toMatch(/could not do it: Unknown database x_db/);
    // Its answer lost, the agent reports again: taken, and nothing is left of the task.
    expect((await report()).status).toBe(204);
    expect((await t.db.query('SELECT 1 FROM agent_tasks')).rows).toHaveLength(0);

    t.clock.advance(91_000);
    try {
      await expect(dump()).rejects.toThrow(/not online/);
    } finally {
      t.clock.advance(-91_000);
    }
    expect((await t.db.query('SELECT 1 FROM agent_tasks')).rows).toHaveLength(0);
  });

  it('a task whose waiter is gone (its lease lapsed) is not handed out and its bytes are refused; housekeeping deletes it after the longest wait', async () => {
    const a = await enrolledServer();
    const insert = (id: string, gone: string) =>
      t.db.query(`INSERT INTO agent_tasks (id, server_id, spec, file, alive_at) VALUES ($1, $2, $3, $4, now() - $5::interval)`, [
        id,
        a.server.id,
        { action: 'database.dump', database: 'x_db' },
        path.join(newAgentDir(), `${id}.sql`),
        gone,
      ]);
    await insert('tsk_01m8f000000000000000000old', '31 minutes');
    await insert('tsk_01m8f000000000000000lapsed', '16 seconds');
    await insert('tsk_01m8f0000000000000000alive', '1 second');
    try {
      const keys = async () => ((await poll(a.identity)).body?.units ?? []).map((u: { key: string }) => u.key);
      expect(await keys()).toEqual(['tsk_01m8f0000000000000000alive']);
      const put = (id: string) =>
        agentUpload(url, a.identity, `/agent/v1/units/task/${id}/artifacts/output`, Readable.from([Buffer.from('rows')])).then(
          () => 204,
          (e: Error) => Number(/: (\d{3}) /.exec(e.message)?.[1]),
        );
      expect(await put('tsk_01m8f000000000000000lapsed')).toBe(404);
      expect(await put('tsk_01m8f0000000000000000alive')).toBe(204);
      await pruneStaleTasks(t.db);
      const left = await t.db.query('SELECT id FROM agent_tasks WHERE server_id = $1 ORDER BY id', [a.server.id]);
      expect(left.rows.map((r) => r.id)).toEqual(['tsk_01m8f0000000000000000alive', 'tsk_01m8f000000000000000lapsed']);
    } finally {
      await t.db.query('DELETE FROM agent_tasks WHERE server_id = $1', [a.server.id]);
    }
  });

  it('a waiting task’s lease is renewed while its waiter waits, and a waiter whose task was deleted fails at once', async () => {
    const a = await enrolledServer();
    await poll(a.identity);
    const outcome = runAgentTask(
      t.db,
      t.clock,
      a.server.id,
      { action: 'database.dump', database: 'x_db' },
      { file: path.join(newAgentDir(), 'd.sql') },
    ).then(
      () => 'done',
      (e: Error) => e.message,
    );
    const taskKeys = async () =>
      ((await poll(a.identity)).body?.units ?? [])
        .filter((u: { kind: string }) => u.kind === 'task')
        .map((u: { key: string }) => u.key);
    const key: string = await eventually(async () => (await taskKeys())[0]);
    // Its lease made to lapse: withheld until the waiter's next look renews it.
    await t.db.query(`UPDATE agent_tasks SET alive_at = now() - interval '1 minute' WHERE id = $1`, [key]);
    await eventually(async () => (await taskKeys()).includes(key));
    await t.db.query('DELETE FROM agent_tasks WHERE id = $1', [key]);
    expect(await outcome).toBe('the task was lost');
  });

  it('a receive task whose relayed copy went on without it fails its waiter at once, and its agent finds no bytes to fetch', async () => {
    const a = await enrolledServer();
    await poll(a.identity);
    const relay = new Relay();
    const site = { account_id: 'acc_00000000000000000000000000', site_id: 'sit_00000000000000000000000000' };
    const outcome = runAgentTask(
      t.db,
      t.clock,
      a.server.id,
      { action: 'site.receive', ...site, release: 'dep_00000000000000000000000000', whole: true },
      { relay },
    ).then(
      () => 'done',
      (e: Error) => e.message,
    );
    const key: string = await eventually(
      async () => (await poll(a.identity)).body?.units?.find((u: { kind: string }) => u.kind === 'task')?.key,
    );
    // Dropped before this server asked for the bytes (it fell behind): the copy went on without it.
    relay.drop('the receiving server took no bytes for too long');
    expect((await agentCall(url, a.identity, 'GET', `/agent/v1/units/task/${key}/artifacts/input`)).status).toBe(404);
    // Not the task's ten minutes: the waiter's next look (a second at most) ends it.
    expect(await outcome).toBe('the relayed copy went on without this server');
    expect((await t.db.query('SELECT 1 FROM agent_tasks WHERE id = $1', [key])).rows).toHaveLength(0);
  });

  /** A dump on one server relayed to a load on another, as a move's first copy of a database is. */
  async function relayedDump(maxBytes?: number) {
    const a = await enrolledServer();
    const b = await enrolledServer();
    await Promise.all([poll(a.identity), poll(b.identity)]);
    const file = path.join(newAgentDir(), 'shop.sql');
    const relayed = relayedTask(
      { db: t.db, clock: t.clock },
      { serverId: a.server.id, spec: { action: 'database.dump', database: 'x_db' }, options: { file, maxBytes } },
      {
        serverId: b.server.id,
        spec: { action: 'database.load', database: { name: 'x_db', charset: 'utf8mb4', collation: 'utf8mb4_unicode_ci' } },
      },
    );
    relayed.catch(() => undefined); // looked at once the agents have reported
    const taskOf = (identity: Identity) =>
      eventually(async () => (await poll(identity)).body?.units?.find((u: { kind: string }) => u.kind === 'task')?.key as string);
    const [dumpKey, loadKey] = await Promise.all([taskOf(a.identity), taskOf(b.identity)]);
    const rows = Buffer.alloc(3 * 2 ** 20, 'INSERT INTO t VALUES (1);\n');
    // The load's request is answered once the dump's bytes begin to arrive.
    const [read, sent] = await Promise.allSettled([
      agentDownload(url, b.identity, `/agent/v1/units/task/${loadKey}/artifacts/input`).then(text),
      agentUpload(url, a.identity, `/agent/v1/units/task/${dumpKey}/artifacts/output`, Readable.from([rows])),
    ]);
    const report = (identity: Identity, key: string, error?: string) =>
      agentCall(url, identity, 'POST', '/agent/v1/reports', { reports: [{ kind: 'task', key, generation: 1, error }] });
    return { a, b, file, rows, read, sent, relayed, report, dumpKey, loadKey };
  }

  it('a dump relayed to another server’s load: the load reads the bytes as they arrive, and the dump is kept here as well', async () => {
    const { a, b, file, rows, read, sent, relayed, report, dumpKey, loadKey } = await relayedDump();
    expect(sent.status).toBe('fulfilled');
    expect(read).toEqual({ status: 'fulfilled', value: rows.toString() });
    expect(readFileSync(file).equals(rows)).toBe(true);
    await report(a.identity, dumpKey);
    await report(b.identity, loadKey);
    expect(await relayed).toBe(true);
  });

  it('a relayed dump past its bound is refused (413) and not kept, and the load reading it fails', async () => {
    const { a, b, file, read, sent, relayed, report, dumpKey, loadKey } = await relayedDump(2 ** 20);
    expect(sent.status === 'rejected' && String(sent.reason)).toMatch(/413/);
    expect(read.status).toBe('rejected');
    expect(existsSync(file) || existsSync(`${file}.partial`)).toBe(false);
    // Each agent reports its failure, as the real ones do.
    await report(b.identity, loadKey, 'the input was cut off');
    await report(a.identity, dumpKey, 'the control plane refused the dump');
    await expect(relayed).rejects.toThrow(/refused the dump/);
  });

  it('reports are refused for another server’s unit and for a generation never given, changing nothing', async () => {
    const a = await enrolledServer();
    const b = await enrolledServer();
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, { placement: { database: a.server.id } });
    await t.post('/v1/databases', { account_id: account.id, name: `${account.username}_x` });
    const unit = await eventually(async () => (await poll(a.identity)).body?.units?.[0]);
    const report = (identity: Identity, generation: number) =>
      agentCall(url, identity, 'POST', '/agent/v1/reports', { reports: [{ kind: 'database', key: unit.key, generation }] });
    expect((await report(b.identity, unit.generation)).status).toBe(403);
    expect((await report(a.identity, unit.generation + 5)).body).toMatchObject({ code: 'validation_failed' });
    expect((await poll(a.identity)).body?.units).toHaveLength(1);
    const done = await report(a.identity, unit.generation);
    expect(done.status).toBe(204);
    expect((await poll(a.identity)).body?.units).toHaveLength(0);
    // The report answers with what a poll now knows: made with it, the poll waits for the next
    // change instead of coming straight back with nothing to apply.
    const started = Date.now();
    const next = await poll(a.identity, `wait=1&known=${done.known}`);
    expect(next.body).toMatchObject({ known: done.known, units: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('the default policy places on the online server with the role holding the fewest accounts; none left is 409 no_capacity', async () => {
    const plan = await createPlan(t);
    const disable = async (except: string[]) => {
      const servers = (await t.get('/v1/servers?limit=200')).body.data as { id: string; placement: string }[];
      for (const s of servers.filter((s) => !except.includes(s.id) && s.placement === 'enabled'))
        expect((await t.request('PATCH', `/v1/servers/${s.id}`, { body: { placement: 'disabled' } })).status).toBe(200);
    };
    // A new online database server holds no account: it is the emptiest (the earlier ones are set aside).
    const { server, identity } = await enrolledServer({ capacity: { accounts: 1 } });
    await disable([LOCAL, server.id]);
    await poll(identity);
    const first = await createAccount(t, plan.id);
    expect(first.placement.database).toBe(server.id);
    // Full now: the next goes to the local server.
    const second = await createAccount(t, plan.id);
    expect(second.placement.database).toBe(LOCAL);
    await disable([]);
    try {
      const refused = await t.post('/v1/accounts', {
        username: 'nocap' + Date.now().toString(36).slice(-5),
        contact_email: 'a@b.example.com',
        plan_id: plan.id,
      });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'no_capacity', role: 'web' });
    } finally {
      await t.request('PATCH', `/v1/servers/${LOCAL}`, { body: { placement: 'enabled' } });
    }
  });

  it('a server whose disk has reached capacity.disk_bytes takes no new account, by placement or by a move', async () => {
    const plan = await createPlan(t);
    const { server, identity } = await enrolledServer({
      roles: ['web', 'mail', 'database'],
      capacity: { accounts: 10, disk_bytes: 4096 },
    });
    const report = (bytes: number) =>
      agentCall(url, identity, 'GET', '/agent/v1/units?wait=0', undefined, {
        headers: { 'berth-agent-version': '0.1.0', 'berth-disk-bytes-used': String(bytes) },
      });
    const servers = (await t.get('/v1/servers?limit=200')).body.data as { id: string; placement: string }[];
    const aside = servers.filter((s) => s.id !== server.id && s.placement === 'enabled').map((s) => s.id);
    const placement = (value: string) => (id: string) => t.request('PATCH', `/v1/servers/${id}`, { body: { placement: value } });
    for (const id of aside) expect((await placement('disabled')(id)).status).toBe(200);
    try {
      expect((await report(4096)).status).toBe(200);
      expect((await t.get(`/v1/servers/${server.id}`)).body.usage.disk_bytes).toBe(4096);
      const refused = await t.post('/v1/accounts', {
        username: `dfull${Date.now().toString(36).slice(-5)}`,
        contact_email: 'a@b.example.com',
        plan_id: plan.id,
      });
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body).toMatchObject({ code: 'no_capacity' });
      const elsewhere = await createAccount(t, plan.id, undefined, { placement: { web: LOCAL, mail: LOCAL, database: LOCAL } });
      const move = await t.post(`/v1/accounts/${elsewhere.id}/move`, { to: { web: server.id } });
      expect(move.status, move.text).toBe(422);
      expect(move.body.errors[0]).toMatchObject({ pointer: '/to/web', code: 'server_full' });
      expect(move.body.errors[0].detail).toContain('disk capacity of 4096 bytes');

      expect((await report(4095)).status).toBe(200);
      expect((await createAccount(t, plan.id)).placement).toEqual({ web: server.id, mail: server.id, database: server.id });
      expect((await report(1_000_000)).status).toBe(200);
      const unlimited = await t.request('PATCH', `/v1/servers/${server.id}`, {
        body: { capacity: { accounts: 10, disk_bytes: null } },
      });
      expect(unlimited.status, unlimited.text).toBe(200);
      expect((await createAccount(t, plan.id)).placement.web).toBe(server.id);
    } finally {
      for (const id of aside) await placement('enabled')(id);
      await placement('disabled')(server.id);
    }
  });

  it('a reseller cannot choose a server; a server without the role is refused', async () => {
    const plan = await createPlan(t);
    const bad = await t.post('/v1/accounts', {
      username: 'badplace' + Date.now().toString(36).slice(-4),
      contact_email: 'a@b.example.com',
      plan_id: plan.id,
      placement: { web: (await addServer({ roles: ['database'] })).id },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0]).toMatchObject({ pointer: '/placement/web', code: 'unknown_server' });
    const reseller = await createReseller(t);
    const token = (await t.post('/v1/tokens', { name: 'r', principal: { kind: 'reseller', id: reseller.id }, scopes: ['*'] }))
      .body.secret as string;
    const own = await createPlan(t, token);
    const chosen = await t.post(
      '/v1/accounts',
      {
        username: 'chose' + Date.now().toString(36).slice(-4),
        contact_email: 'a@b.example.com',
        plan_id: own.id,
        placement: { database: LOCAL },
      },
      token,
    );
    expect(chosen.body.errors?.[0]).toMatchObject({ pointer: '/placement', code: 'not_allowed' });
  });

  it('a server that stops polling becomes unreachable and is announced once', async () => {
    const { server, identity } = await enrolledServer();
    await poll(identity);
    await eventually(async () =>
      (await t.get(`/v1/events?type=server.online`)).body.data.some((e: any) => e.resource.id === server.id),
    );
    t.clock.advance(91_000);
    try {
      expect((await t.get(`/v1/servers/${server.id}`)).body.status).toBe('unreachable');
      await eventually(async () =>
        (await t.get(`/v1/events?type=server.unreachable`)).body.data.some((e: any) => e.resource.id === server.id),
      );
    } finally {
      t.clock.advance(-91_000);
    }
  });
});

describe('the agent listener closing', () => {
  it('answers the polls under way at once, rather than after their 30 s wait', async () => {
    const own = await createTestApp({ env: { BERTH_AGENT_LISTEN: '127.0.0.1:0' } });
    const ownUrl = `https://127.0.0.1:${await listenAgents(own.app, own.config)}`;
    const server = (
      await own.post('/v1/servers', { name: 'closing', roles: ['database'], ipv4: '127.0.0.15', capacity: { accounts: 1 } })
    ).body;
    const fingerprint = /--ca-fingerprint (\S+)/.exec(server.enrolment.command)?.[1] as string;
    const identity = await enrol({
      url: ownUrl,
      token: server.enrolment.token,
      caFingerprint: fingerprint,
      dataDir: newAgentDir(),
    });
    const known = (await agentCall(ownUrl, identity, 'GET', '/agent/v1/units?wait=0')).body?.known;
    own.clock.advance(5000);
    const waiting = agentCall(ownUrl, identity, 'GET', `/agent/v1/units?wait=30&known=${known}`);
    // The poll is under way once it has been seen at the moved clock's time (it is then waiting).
    const seenAt = own.clock.now().getTime();
    await eventually(async () => {
      const last = (await own.get(`/v1/servers/${server.id}`)).body.last_seen_at as string | null;
      return last !== null && new Date(last).getTime() === seenAt;
    });
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await waiting).status).toBe(200);
  });
});

describe('a poll woken by a change', () => {
  it('answers a change committed while it reads the units at once, rather than at the end of its wait', async () => {
    const { server, identity } = await enrolledServer();
    const plan = await createPlan(t);
    const account = await createAccount(t, plan.id, undefined, { placement: { database: server.id } });
    const known = (await poll(identity)).body?.known as string;
    const notified: string[] = [];
    const unlisten = await t.db.listen(AGENT_UNITS_CHANNEL, (id) => notified.push(id));
    // The second change commits, and its wake-ups are delivered (the commit's, then its apply
    // job's), after the woken poll asked whether anything is pending and before it has the answer
    // (which predates the change).
    const query = t.db.query;
    let second: ReturnType<typeof t.post> | undefined;
    t.db.query = (async (text: string, params?: unknown[]) => {
      const result = await query.call(t.db, text, params);
      if (second === undefined && text.startsWith('SELECT ARRAY[')) {
        const before = notified.length;
        second = t.post('/v1/databases', { account_id: account.id, name: `${account.username}_late` });
        expect((await second).status).toBe(201);
        await eventually(async () => notified.length >= before + 2);
      }
      return result;
    }) as typeof query;
    try {
      const started = Date.now();
      const waiting = poll(identity, `wait=20&known=${known}`);
      // The first change: a wake-up that changes none of the server's units (as a report's does).
      await eventually(async () => (await t.get(`/v1/servers/${server.id}`)).body.status === 'online');
      await t.db.query('SELECT pg_notify($1, $2)', [AGENT_UNITS_CHANNEL, server.id]);
      const answer = await waiting;
      expect(second).toBeDefined();
      expect(answer.body?.units?.map((u: { kind: string }) => u.kind)).toEqual(['database']);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      t.db.query = query;
      await unlisten();
    }
  });
});
