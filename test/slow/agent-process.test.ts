import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { apiOf, processKit, until } from '../helpers/fleet-processes.js';
import { freePort } from '../helpers/ports.js';
import { startAgentProcess, startServer, waitReady } from '../helpers/server-process.js';

/**
 * `berth serve` and `berth agent` as separate processes with their own data directories: the
 * enrolment command the API answers, run as printed; the agent applying its server's database
 * units (embedded driver, into its own directory); killed, it catches up when restarted; and
 * after a "reboot" with the control plane gone, it serves its last units from its own disk.
 */
const OPERATOR = 'agent-process-test-operator-token-0123456789';
const kit = processKit('berth-agent-proc-');
const { tempDir } = kit;

/** `berth agent ...` as a process of its own (node itself receives the signals). */
const agent = (args: string[], dataDir: string) => kit.started(startAgentProcess(args, dataDir));

// Its processes keep PGlite in their data directories whatever the run: the slow suite's
// PostgreSQL run would only repeat it.
it('the agent enrols with the printed command, applies its units, catches up after SIGKILL and re-applies from disk after a reboot', async (ctx) => {
  if (process.env.TEST_DATABASE_URL) ctx.skip();
  const port = await freePort();
  const agentPort = await freePort();
  const call = apiOf(port, OPERATOR);
  const controlDir = tempDir();
  const server = startServer(controlDir, port, { BERTH_BOOTSTRAP_TOKEN: OPERATOR, BERTH_AGENT_LISTEN: `127.0.0.1:${agentPort}` });
  kit.started(server);
  await waitReady(port, server);

  const created = await call('POST', '/v1/servers', {
    name: 'db-1',
    roles: ['database'],
    ipv4: '127.0.0.12',
    capacity: { accounts: 10 },
  });
  expect(created.status).toBe(201);
  const command = created.body.enrolment.command as string;
  expect(command.startsWith(`berth agent enrol --url https://127.0.0.1:${agentPort} `)).toBe(true);
  const agentDir = tempDir();
  const enrolment = agent(command.split(' ').slice(2), agentDir);
  expect(await enrolment.exited, enrolment.output()).toBe(0);

  let running = agent(['run'], agentDir);
  await until(async () => (await call('GET', `/v1/servers/${created.body.id}`)).body.status === 'online');

  const plan = (
    await call('POST', '/v1/plans', {
      name: 'p',
      max_sites: 1,
      max_domains: 1,
      max_email_accounts: 1,
      max_email_quota_mb: 1,
      disk_quota_mb: 100,
      max_backups: 1,
      max_dns_records_per_domain: 10,
    })
  ).body;
  const account = (
    await call('POST', '/v1/accounts', {
      username: 'agentproc',
      contact_email: 'a@example.com',
      plan_id: plan.id,
      placement: { database: created.body.id },
    })
  ).body;
  expect(account.placement.database).toBe(created.body.id);
  const rendered = path.join(agentDir, 'rendered', 'db', 'agentproc.sql');
  const first = (await call('POST', '/v1/databases', { account_id: account.id, name: 'agentproc_one' })).body;
  await until(async () => (await call('GET', `/v1/databases/${first.id}`)).body.sync_state === 'in_sync');
  expect(readFileSync(rendered, 'utf8')).toContain('agentproc_one');
  expect(existsSync(path.join(controlDir, 'rendered', 'db', 'agentproc.sql'))).toBe(false);

  // Killed: the change waits; restarted, the agent catches up.
  running.child.kill('SIGKILL');
  await running.exited;
  const second = (await call('POST', '/v1/databases', { account_id: account.id, name: 'agentproc_two' })).body;
  expect((await call('GET', `/v1/databases/${second.id}`)).body.sync_state).toBe('pending');
  running = agent(['run'], agentDir);
  await until(async () => (await call('GET', `/v1/databases/${second.id}`)).body.sync_state === 'in_sync');
  expect(readFileSync(rendered, 'utf8')).toContain('agentproc_two');

  // A reboot that lost what was applied, while the control plane is down: the agent serves its
  // last units from its own disk before it reaches anyone.
  running.child.kill('SIGTERM');
  expect(await running.exited).toBe(0);
  server.child.kill('SIGTERM');
  await server.exited;
  rmSync(rendered);
  running = agent(['run'], agentDir);
  await until(async () => existsSync(rendered) && readFileSync(rendered, 'utf8').includes('agentproc_two'));
  running.child.kill('SIGTERM');
  expect(await running.exited).toBe(0);
}, 240_000);
