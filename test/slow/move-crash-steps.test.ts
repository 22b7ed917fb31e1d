import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { MOVE_STEPS } from '../../src/modules/moves/schemas.js';
import { PLAN_LIMITS } from '../helpers/fixtures.js';
import {
  accountWithSite,
  apiOf,
  filesHolding,
  hostingServers,
  moveThroughCrashes,
  processKit,
  until,
} from '../helpers/fleet-processes.js';
import { mariadbSql, type MariadbEnv } from '../helpers/mariadb-servers.js';
import { freePort } from '../helpers/ports.js';
import { startAgentProcess, startServer, waitReady } from '../helpers/server-process.js';

/**
 * A move whose three processes are killed with SIGKILL after every one of its steps: the control
 * plane kills itself once each step has done its work and before it is recorded
 * (BERTH_CRASH_AFTER_MOVE_STEPS), and halfway through the steps with more than one effect
 * (BERTH_CRASH_INSIDE_MOVE_STEPS; the TTLs lowered and restored: between the account's two
 * zones), so the step runs a second time when it is started again; each time the test kills the
 * source's and the target's agents too and starts all three again. The move still completes: the
 * target serves the site's files and holds the mailbox's message, once, and (where MariaDB servers
 * can be started here, one per server) every row of the account's database, once, for its user
 * with the same password; each zone's record points at the target with its own TTL again; the
 * source holds nothing of the account.
 */
const OPERATOR = 'move-crash-steps-operator-token-0123456789';
const kit = processKit('berth-move-steps-');
const { tempDir, started } = kit;
const servers = hostingServers(kit);
const noMariadb = servers.skipped;
const ROWS = 100;
/** The steps with a point halfway through them (moves/runner.ts, `crashPoint`). */
const INSIDE = ['lower_ttl', 'freeze', 'land', 'thaw', 'restore_ttl'];
const [A_ADDRESS, B_ADDRESS] = ['127.0.0.41', '127.0.0.42'];
/** The TTL of the zones' records: the least there is, so the forwarding after the cutover lasts a minute at most. */
const TTL = 60;

// Its processes keep PGlite in their data directories whatever the run, as move-crash.test.ts's:
// the slow suite's PostgreSQL run would repeat it (about three minutes of CI), where the control
// plane's transactions dying with its connections are crash-processes.test.ts's and
// job-crash.test.ts's.
it(`a move whose control plane and both agents are killed (SIGKILL) after each of its steps completes and halfway through five: the target serves the site and holds the message, the zones point at it with their own TTLs${noMariadb ? '' : ' and every row of the database'} once, the source keeps nothing${noMariadb ? ` (the database skipped: ${noMariadb})` : ''}`, async (ctx) => {
  if (process.env.TEST_DATABASE_URL) ctx.skip();
  const [port, agentPort] = [await freePort(), await freePort()];
  const call = apiOf(port, OPERATOR);
  const controlDir = tempDir();
  const env = {
    BERTH_BOOTSTRAP_TOKEN: OPERATOR,
    BERTH_AGENT_LISTEN: `127.0.0.1:${agentPort}`,
    BERTH_MOVE_TTL_S: '5',
    BERTH_CRASH_AFTER_MOVE_STEPS: MOVE_STEPS.join(','),
    BERTH_CRASH_INSIDE_MOVE_STEPS: INSIDE.join(','),
    // A killed process's move job is resumed a second after its last renewal rather than fifteen.
    BERTH_JOB_LEASE_MS: '1000',
  };
  const server = started(startServer(controlDir, port, env));
  await waitReady(port, server);

  const [a, b] = [await servers.start(call, 'host-a', A_ADDRESS), await servers.start(call, 'host-b', B_ADDRESS)];

  const planId = (await call('POST', '/v1/plans', { name: 'p', ...PLAN_LIMITS })).body.id;
  const { account, domain, release, maildir, message } = await accountWithSite(call, {
    username: 'movesteps',
    planId,
    placement: { web: a.id, mail: a.id, ...(a.db && { database: a.id }) },
    sourceDir: a.dataDir,
  });
  const served = (dir: string) => path.join(release(dir), 'index.html');
  // Two zones, each with a record pointing at the source: the steps that change the zones one at a
  // time (the TTLs lowered and restored) are killed between the first and the second.
  const zones = [domain, 'movesteps-2.example.com'];
  const second = await call('POST', '/v1/domains', { account_id: account.id, name: zones[1], template: 'empty' });
  expect(second.status, JSON.stringify(second.body)).toBe(201);
  for (const name of zones) {
    const record = await call('POST', `/v1/domains/${name}/records`, { name: '@', type: 'A', content: A_ADDRESS, ttl: TTL });
    expect(record.status, JSON.stringify(record.body)).toBe(201);
  }

  // A database with a user, and rows in a table without a key: a row loaded twice would be seen.
  const appDb = a.db && (await accountDatabase(account.id, a.db));

  const to = { web: b.id, mail: b.id, ...(appDb && { database: b.id }) };
  const moved = await call('POST', `/v1/accounts/${account.id}/move`, { to });
  expect(moved.status, JSON.stringify(moved.body)).toBe(202);
  const move = async () => (await call('GET', `/v1/moves/${moved.body.id}`)).body;
  const { ended: moveEnded, crashes } = await moveThroughCrashes(
    move,
    server,
    async () => {
      // The agents die too, wherever they were; then all three start again.
      for (const s of [a, b]) s.agent.child.kill('SIGKILL');
      await Promise.all([a.agent.exited, b.agent.exited]);
      for (const s of [a, b]) s.agent = started(startAgentProcess(['run'], s.dataDir, s.env));
      const restarted = started(startServer(controlDir, port, env));
      // A short step may complete (and kill the process again) before /readyz is first asked: that
      // is the next crash, which the loop counts.
      await waitReady(port, restarted).catch((e: unknown) => {
        if (restarted.child.exitCode === null && restarted.child.signalCode === null) throw e;
      });
      return restarted;
    },
    300_000,
  );
  expect(moveEnded.status, JSON.stringify(moveEnded.error)).toBe('completed');
  // Killed after every step (`forward` too: a move from a live source never skips it).
  const steps = (await move()).steps as { name: string; state: string }[];
  expect(steps.map((st) => `${st.name}: ${st.state}`)).toEqual(MOVE_STEPS.map((name) => `${name}: done`));
  expect(MOVE_STEPS.filter((step) => !existsSync(path.join(controlDir, `crashed-after-${step}`)))).toEqual([]);
  expect(INSIDE.filter((step) => !existsSync(path.join(controlDir, `crashed-inside-${step}`)))).toEqual([]);
  expect(crashes).toBe(MOVE_STEPS.length + INSIDE.length);
  // Steps run twice told once: one cutover, at one time, after the one freeze.
  const ended = await move();
  const events = async (type: string) =>
    ((await call('GET', `/v1/events?type=${type}&resource_id=${ended.id}`)).body.data as unknown[]).length;
  expect([await events('account.move.cut_over'), await events('account.move.completed')]).toEqual([1, 1]);
  // Each time is the first run's: before the process that ran it killed itself. A file's time is
  // the kernel's coarse clock, up to a tick (a few ms) behind the one the time was read from; a
  // second run would come seconds later, once the processes had started again.
  const killedAt = (marker: string) => statSync(path.join(controlDir, marker)).mtimeMs + 50;
  expect(Date.parse(ended.frozen_at)).toBeLessThanOrEqual(killedAt('crashed-inside-freeze'));
  expect(Date.parse(ended.cut_over_at)).toBeLessThanOrEqual(killedAt('crashed-after-cutover'));

  // Each zone's record points at the target with its own TTL again: neither run of the steps
  // killed halfway took a lowered TTL for the record's own.
  for (const name of zones) {
    const records = (await call('GET', `/v1/domains/${name}/records?type=A`)).body.data;
    expect(records.map((r: { content: string; ttl: number }) => [r.content, r.ttl])).toEqual([[B_ADDRESS, TTL]]);
  }

  // The target serves the account, the message is there once; the source holds nothing of it.
  expect((await call('GET', `/v1/accounts/${account.id}`)).body.placement).toMatchObject({ web: b.id, mail: b.id });
  await until(async () => existsSync(served(b.dataDir)));
  expect(readFileSync(served(b.dataDir), 'utf8')).toBe('movesteps');
  await until(async () => filesHolding(maildir(b.dataDir), message).length > 0);
  expect(filesHolding(maildir(b.dataDir), message)).toHaveLength(1);
  await until(async () => !readdirSync(path.join(a.dataDir, 'accounts')).includes(account.id));
  if (appDb && a.db && b.db) {
    const count = 'SELECT COUNT(*), COUNT(DISTINCT k), MIN(k), MAX(k) FROM kept';
    expect((await mariadbSql(b.db, count, appDb.as)).trim()).toBe(`${ROWS}\t${ROWS}\t1\t${ROWS}`);
    await until(async () => (await mariadbSql(a.db!, `SHOW DATABASES LIKE '${appDb.as.database}'`)).trim() === '');
  }

  /** The account's database on server a with a user who may do all in it, and ROWS rows. */
  async function accountDatabase(accountId: string, db: MariadbEnv) {
    const name = 'movesteps_app';
    const made = await call('POST', '/v1/databases', { account_id: accountId, name });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const user = (await call('POST', '/v1/database-users', { account_id: accountId, username: name, generate_password: true }))
      .body;
    const granted = await call('PUT', `/v1/databases/${made.body.id}/users/${user.id}`, { privileges: ['ALL'] });
    expect(granted.status, JSON.stringify(granted.body)).toBeLessThan(300);
    await until(async () => (await call('GET', `/v1/database-users/${user.id}`)).body.sync_state === 'in_sync');
    const as = { user: user.username as string, password: user.password as string, database: made.body.name as string };
    const values = Array.from({ length: ROWS }, (_, i) => `(${i + 1})`).join(',');
    await mariadbSql(db, `CREATE TABLE kept (k int); INSERT INTO kept VALUES ${values}`, as);
    return { as };
  }
}, 600_000);
