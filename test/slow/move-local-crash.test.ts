import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { accountHome } from '../../src/layout.js';
import { PLAN_LIMITS } from '../helpers/fixtures.js';
import {
  accountWithSite,
  apiOf,
  enrolledServer,
  filesHolding,
  moveThroughCrashes,
  processKit,
  until,
} from '../helpers/fleet-processes.js';
import { freePort } from '../helpers/ports.js';
import { startServer, waitReady } from '../helpers/server-process.js';

/**
 * A move from the control plane's own server to an agent's, the control plane killed (SIGKILL)
 * halfway through the two steps where its own server's part is an effect apart: `forward` (its
 * web and mail servers proxying and relaying to the target, the move not yet recorded as
 * forwarding) and `cleanup` (the other servers' withdrawals recorded, its own share of the
 * account not yet removed). Started again, it runs each step a second time and the move
 * completes: the target serves the site and holds the message once; the control plane serves
 * nothing of the account and keeps none of its files. (move-crash-steps.test.ts kills the
 * processes of a move between two agents between and inside its steps.)
 */
const OPERATOR = 'move-local-crash-operator-token-0123456789';
const kit = processKit('berth-move-local-');
const { tempDir, started } = kit;
const INSIDE = ['forward', 'cleanup'];

// Its processes keep PGlite in their data directories whatever the run, as move-crash.test.ts's.
it('a move from the local server whose control plane is killed halfway through its forward and its cleanup completes: the target serves the account, the control plane nothing of it', async (ctx) => {
  if (process.env.TEST_DATABASE_URL) ctx.skip();
  const [port, agentPort] = [await freePort(), await freePort()];
  const call = apiOf(port, OPERATOR);
  const controlDir = tempDir();
  const env = {
    BERTH_BOOTSTRAP_TOKEN: OPERATOR,
    BERTH_AGENT_LISTEN: `127.0.0.1:${agentPort}`,
    // No records (the empty template): the forwarding lasts BERTH_MOVE_TTL_S after the cutover.
    BERTH_MOVE_TTL_S: '5',
    BERTH_CRASH_INSIDE_MOVE_STEPS: INSIDE.join(','),
    // A killed process's move job is resumed a second after its last renewal rather than fifteen.
    BERTH_JOB_LEASE_MS: '1000',
  };
  const server = started(startServer(controlDir, port, env));
  await waitReady(port, server);
  const b = await enrolledServer(call, kit, { name: 'host-b', roles: ['web', 'mail'], ipv4: '127.0.0.46' });

  const planId = (await call('POST', '/v1/plans', { name: 'p', ...PLAN_LIMITS })).body.id;
  const { account, domain, site, release, maildir, message } = await accountWithSite(call, {
    username: 'movelocal',
    planId,
    sourceDir: controlDir,
  });
  const served = (dir: string) => path.join(release(dir), 'index.html');
  const here = {
    block: path.join(controlDir, 'rendered', 'web', 'sites', `${site.id}.conf`),
    passwd: path.join(controlDir, 'rendered', 'mail', 'passwd'),
    transport: path.join(controlDir, 'rendered', 'mail', 'transport'),
  };
  expect(readFileSync(here.passwd, 'utf8')).toContain(`info@${domain}`);

  const moved = await call('POST', `/v1/accounts/${account.id}/move`, { to: { web: b.id, mail: b.id } });
  expect(moved.status, JSON.stringify(moved.body)).toBe(202);
  const move = async () => (await call('GET', `/v1/moves/${moved.body.id}`)).body;
  const { ended, crashes } = await moveThroughCrashes(
    move,
    server,
    async (crashes) => {
      // Killed in the forward, its web server already proxies to the target; in the cleanup, it
      // still holds the account's files.
      if (crashes === 1) expect(readFileSync(here.block, 'utf8')).toContain('proxy_pass $scheme://127.0.0.46:$server_port;');
      if (crashes === 2) expect(existsSync(served(controlDir))).toBe(true);
      const restarted = started(startServer(controlDir, port, env));
      await waitReady(port, restarted);
      return restarted;
    },
    120_000,
  );
  expect(ended.status, JSON.stringify(ended.error)).toBe('completed');
  expect(INSIDE.filter((step) => !existsSync(path.join(controlDir, `crashed-inside-${step}`)))).toEqual([]);
  expect(crashes).toBe(INSIDE.length);
  const events = async (type: string) =>
    ((await call('GET', `/v1/events?type=${type}&resource_id=${moved.body.id}`)).body.data as unknown[]).length;
  expect([await events('account.move.cut_over'), await events('account.move.completed')]).toEqual([1, 1]);

  // The target serves the account, the message there once; nothing of it is served or kept here.
  expect((await call('GET', `/v1/accounts/${account.id}`)).body.placement).toMatchObject({ web: b.id, mail: b.id });
  await until(async () => existsSync(served(b.dataDir)));
  expect(readFileSync(served(b.dataDir), 'utf8')).toBe('movelocal');
  await until(async () => filesHolding(maildir(b.dataDir), message).length > 0);
  expect(filesHolding(maildir(b.dataDir), message)).toHaveLength(1);
  expect(existsSync(here.block)).toBe(false);
  expect(readFileSync(here.passwd, 'utf8')).not.toContain(`@${domain}`);
  expect(readFileSync(here.transport, 'utf8')).toBe('');
  expect(existsSync(accountHome(controlDir, account.id))).toBe(false);
}, 300_000);
