import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { tarGz } from '../helpers/archives.js';
import { PLAN_LIMITS } from '../helpers/fixtures.js';
import { apiOf, enrolledServer, processKit, until } from '../helpers/fleet-processes.js';
import { freePort } from '../helpers/ports.js';
import { startAgentProcess, startServer, waitReady } from '../helpers/server-process.js';

/**
 * A move whose control plane is killed (SIGKILL, nothing cleaned up) in the middle: the server,
 * its two agents (`berth agent`, embedded drivers into their own directories) as processes of
 * their own. Restarted, the control plane resumes the move's job and finishes it.
 */
const OPERATOR = 'move-crash-test-operator-token-0123456789';
const kit = processKit('berth-move-crash-');
const { tempDir, started } = kit;

// Its processes keep PGlite in their data directories whatever the run: the slow suite's
// PostgreSQL run would only repeat it.
it('a move whose control plane is killed during its freeze resumes when it starts again, and one whose target’s agent is killed as it cuts over completes once the agent is back: the target serves the site, the source keeps nothing', async (ctx) => {
  if (process.env.TEST_DATABASE_URL) ctx.skip();
  const [port, agentPort] = [await freePort(), await freePort()];
  const call = apiOf(port, OPERATOR);
  const controlDir = tempDir();
  // The source forwards for the records' TTLs after the cutover: short ones keep the test short.
  const env = { BERTH_BOOTSTRAP_TOKEN: OPERATOR, BERTH_AGENT_LISTEN: `127.0.0.1:${agentPort}`, BERTH_MOVE_TTL_S: '5' };
  let server = started(startServer(controlDir, port, env));
  await waitReady(port, server);

  const webServer = (name: string, ipv4: string) => enrolledServer(call, kit, { name, roles: ['web'], ipv4 });
  const [a, b] = [await webServer('web-a', '127.0.0.31'), await webServer('web-b', '127.0.0.32')];

  const plan = (await call('POST', '/v1/plans', { name: 'p', ...PLAN_LIMITS })).body;
  const account = (
    await call('POST', '/v1/accounts', {
      username: 'movecrash',
      contact_email: 'a@example.com',
      plan_id: plan.id,
      placement: { web: a.id },
    })
  ).body;
  expect((await call('POST', '/v1/domains', { account_id: account.id, name: 'movecrash.example.com' })).status).toBe(201);
  for (const r of (await call('GET', '/v1/domains/movecrash.example.com/records?type=A')).body.data)
    expect((await call('PATCH', `/v1/domains/movecrash.example.com/records/${r.id}`, { ttl: 60 })).status).toBe(200);
  const site = (await call('POST', '/v1/sites', { account_id: account.id, hostname: 'movecrash.example.com' })).body;
  await until(async () => (await call('GET', `/v1/sites/${site.id}`)).body.status === 'active');
  const deployed = await call(
    'POST',
    `/v1/sites/${site.id}/deployments`,
    undefined,
    tarGz([{ path: 'index.html', content: 'kept' }]),
  );
  expect(deployed.status).toBe(202);
  const served = (dir: string) => path.join(dir, 'accounts', account.id, 'sites', site.id, 'current', 'index.html');
  await until(async () => existsSync(served(a.dataDir)));

  const moved = await call('POST', `/v1/accounts/${account.id}/move`, { to: { web: b.id }, cutover: 'manual' });
  expect(moved.status).toBe(202);
  await until(async () => (await call('GET', `/v1/moves/${moved.body.id}`)).body.status === 'ready');
  // The source's agent away, the move waits in its freeze; then the control plane is killed.
  a.agent.child.kill('SIGKILL');
  await a.agent.exited;
  expect((await call('POST', `/v1/moves/${moved.body.id}/cutover`, {})).status).toBe(200);
  await until(async () => (await call('GET', `/v1/moves/${moved.body.id}`)).body.status === 'freezing');
  server.child.kill('SIGKILL');
  await server.exited;

  server = started(startServer(controlDir, port, env));
  await waitReady(port, server);
  a.agent = started(startAgentProcess(['run'], a.dataDir));
  // The target in charge, the source proxies to it until its records' TTL (60 s) has passed
  // since their lowering, then is cleaned up.
  const forwarding = await until(async () => {
    const m = (await call('GET', `/v1/moves/${moved.body.id}`)).body;
    return ['forwarding', 'completed', 'failed'].includes(m.status) ? m : null;
  }, 150_000);
  expect(forwarding.status, JSON.stringify(forwarding.error)).toBe('forwarding');
  const block = path.join(a.dataDir, 'rendered', 'web', 'sites', `${site.id}.conf`);
  await until(async () => readFileSync(block, 'utf8').includes('proxy_pass $scheme://127.0.0.32:$server_port;'));
  const done = await until(async () => {
    const m = (await call('GET', `/v1/moves/${moved.body.id}`)).body;
    return ['completed', 'failed'].includes(m.status) ? m : null;
  }, 150_000);
  expect(done.status, JSON.stringify(done.error)).toBe('completed');
  expect((await call('GET', `/v1/accounts/${account.id}`)).body.placement.web).toBe(b.id);
  await until(async () => existsSync(served(b.dataDir)));
  expect(readFileSync(served(b.dataDir), 'utf8')).toBe('kept');
  await until(async () => !readdirSync(path.join(a.dataDir, 'accounts')).includes(account.id));

  // Back to server a, whose agent (the target now) is killed with SIGKILL as the move cuts over:
  // started again, it applies what the move put there, and the move completes. Without records
  // the source forwards for BERTH_MOVE_TTL_S rather than another 60 s window (the forwarding was
  // seen above).
  for (const r of (await call('GET', '/v1/domains/movecrash.example.com/records?type=A')).body.data)
    expect((await call('DELETE', `/v1/domains/movecrash.example.com/records/${r.id}`)).status).toBe(204);
  const back = await call('POST', `/v1/accounts/${account.id}/move`, { to: { web: a.id } });
  expect(back.status, JSON.stringify(back.body)).toBe(202);
  const status = async () => (await call('GET', `/v1/moves/${back.body.id}`)).body;
  await until(async () => ['cutting_over', 'forwarding', 'completed', 'failed'].includes((await status()).status));
  a.agent.child.kill('SIGKILL');
  await a.agent.exited;
  a.agent = started(startAgentProcess(['run'], a.dataDir));
  const home = await until(async () => {
    const m = await status();
    return ['completed', 'failed'].includes(m.status) ? m : null;
  }, 200_000);
  expect(home.status, JSON.stringify(home.error)).toBe('completed');
  expect(readFileSync(served(a.dataDir), 'utf8')).toBe('kept');
  await until(async () => !readdirSync(path.join(b.dataDir, 'accounts')).includes(account.id));
}, 600_000);
