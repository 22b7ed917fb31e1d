import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenAgents } from '../../src/app.js';
import { openDb, type Db } from '../../src/db/client.js';
import { agentHarness } from '../helpers/agents.js';
import { createTestApp, eventually, type TestApp } from '../helpers/app.js';
import { freshDb, onPostgres } from '../helpers/db.js';
import { createAccount, createPlan } from '../helpers/fixtures.js';

/**
 * A move's job in two control-plane processes on one database, each running one move at a time:
 * a request (a cancel) sends the job again while a run is under way in one process, and the other
 * takes it. The second run waits for the first instead of rolling back beside it (as it does in
 * another worker of the same process). PGlite is one process.
 */
const ENV = { BERTH_AGENT_LISTEN: '127.0.0.1:0', BERTH_MOVE_TTL_S: '5', BERTH_MOVE_CONCURRENCY: '1' };
const LOCAL = 'srv_00000000000000000000000000';

describe.skipIf(!onPostgres())('a move in two processes', () => {
  let database: Awaited<ReturnType<typeof freshDb>>;
  let other: Db;
  let t: TestApp;
  let second: TestApp;
  let url: string;
  const agents = agentHarness(
    () => t,
    () => url,
  );

  beforeAll(async () => {
    database = await freshDb();
    t = await createTestApp({ db: database.db, env: ENV });
    url = `https://127.0.0.1:${await listenAgents(t.app, t.config)}`;
    other = await openDb({ databaseUrl: database.url, dataDir: '' });
    second = await createTestApp({ db: other, dataDir: t.dataDir, env: ENV });
  });
  afterAll(async () => {
    await agents.stopAgents();
    await second?.close();
    await t?.close();
    await other?.close();
    await database?.db.close();
    await database?.drop();
    agents.removeDirs();
  });

  const runningServer = (ipv4: string) => agents.runningServer({ ipv4 });

  const count = async (sql: string, params: unknown[] = []) => (await database.db.query<{ n: number }>(sql, params)).rows[0]?.n;

  it('canceled while its run waits for its source, rolls back once, after that run', async () => {
    const a = await runningServer('127.0.0.41');
    const b = await runningServer('127.0.0.42');
    const account = await createAccount(t, (await createPlan(t)).id, undefined, {
      placement: { web: a.server.id, mail: a.server.id, database: LOCAL },
    });
    const name = `${account.username}.example.com`;
    expect((await t.post('/v1/domains', { account_id: account.id, name, mail_enabled: true })).status).toBe(201);
    const moved = await t.post(`/v1/accounts/${account.id}/move`, {
      to: { web: b.server.id, mail: b.server.id },
      cutover: 'manual',
    });
    expect(moved.status, moved.text).toBe(202);
    const move = async () => (await t.get(`/v1/moves/${moved.body.id}`)).body;
    await eventually(async () => (await move()).status === 'ready');

    // The source's agent away: the run that cuts over waits in its freeze for the source to apply it.
    await a.stop();
    expect((await t.post(`/v1/moves/${moved.body.id}/cutover`, {})).status).toBe(200);
    await eventually(async () => (await move()).status === 'freezing');
    expect((await t.post(`/v1/moves/${moved.body.id}/cancel`, {})).status).toBe(200);

    // The cancel's run goes to the process whose worker is free, and waits there for the first.
    const active = () => count(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'account.move' AND state = 'active'`);
    const waiting = () =>
      count(
        `SELECT count(*)::int AS n FROM pg_locks
         WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
    await eventually(async () => {
      // A second run beside the first would roll back at once, while the first still freezes.
      expect((await move()).status).toBe('freezing');
      return (await active()) === 2 && (await waiting()) === 1;
    });

    // The source back: the first run's freeze ends, it finds the cancel and rolls back; the second finds that done.
    a.start();
    const done = await eventually(async () => {
      const m = await move();
      return ['canceled', 'failed', 'completed'].includes(m.status) ? m : null;
    });
    expect(done.status).toBe('canceled');
    await eventually(async () => (await active()) === 0);
    const events = await t.get(`/v1/events?resource_id=${moved.body.id}&type=account.move.canceled`);
    expect(events.body.data).toHaveLength(1);
    expect((await t.get(`/v1/operations/${moved.body.operation.id}`)).body.status).toBe('canceled');
    expect((await t.get(`/v1/accounts/${account.id}`)).body.placement.web).toBe(a.server.id);
    await eventually(async () => !existsSync(path.join(b.dataDir, 'accounts', account.id)));
  }, 180_000);
});
