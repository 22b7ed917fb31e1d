import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bytesUnder } from '../../src/archives/pack.js';
import { PLAN_LIMITS } from '../helpers/fixtures.js';
import {
  accountWithSite,
  type ApiCall,
  apiOf,
  filesHolding,
  hostingServers,
  processKit,
  until,
} from '../helpers/fleet-processes.js';
import { mariadbSql } from '../helpers/mariadb-servers.js';
import { freePort } from '../helpers/ports.js';
import { startAgentProcess, startServer, waitReady } from '../helpers/server-process.js';

/**
 * Moves whose processes are killed with SIGKILL in the middle of a step, one process and one step
 * per test: the control plane while the copy streams and while the target lands what it was
 * sent, the source's agent while it streams the copy and while it forwards, the target's agent
 * while it receives the copy sent ahead and while it lands; and, where MariaDB servers can be
 * started here (one per server), the source's agent and the control plane while the source dumps
 * the account's database in the final copy, and the target's agent while it loads it. Each move
 * resumes and completes: its site's files and its message are then on the target, once (and its
 * database's rows, once), and the source holds nothing of it. (A move that fails before its cutover
 * rolls back; moves.test.ts proves what that leaves with a cancel.)
 * (move-crash-steps.test.ts kills all three between the steps; move-crash.test.ts the control
 * plane in the freeze and the target's agent at the cutover.)
 */
const OPERATOR = 'move-kills-test-operator-token-0123456789';
const kit = processKit('berth-move-kills-');
const { tempDir, started } = kit;
const servers = hostingServers(kit);
const noMariadb = servers.skipped;
/** Rows of 1 KB, in a table without a key (a row loaded twice would be seen): a dump and a load that take a while to watch. */
const ROWS = 20_000;
/** Large enough that the copy and the land each take a while to watch: 200 files of 100 KB. */
const FILES = Array.from({ length: 200 }, (_, i) => ({ path: `files/${i}.bin`, content: randomBytes(100_000) }));

let call: ApiCall;
let port: number;
let controlDir: string;
let env: Record<string, string>;
let server: ReturnType<typeof startServer>;
type Hosting = Awaited<ReturnType<ReturnType<typeof hostingServers>['start']>>;
let a: Hosting;
let b: Hosting;
let planId: string;

beforeAll(async () => {
  if (process.env.TEST_DATABASE_URL) return;
  port = await freePort();
  call = apiOf(port, OPERATOR);
  controlDir = tempDir();
  env = {
    BERTH_BOOTSTRAP_TOKEN: OPERATOR,
    BERTH_AGENT_LISTEN: `127.0.0.1:${await freePort()}`,
    BERTH_MOVE_TTL_S: '5',
    // A killed control plane's move job is resumed a second after its last renewal rather than fifteen.
    BERTH_JOB_LEASE_MS: '1000',
  };
  server = started(startServer(controlDir, port, env));
  await waitReady(port, server);
  [a, b] = [await servers.start(call, 'host-a', '127.0.0.51'), await servers.start(call, 'host-b', '127.0.0.52')];
  planId = (await call('POST', '/v1/plans', { name: 'p', ...PLAN_LIMITS })).body.id;
}, 300_000);

async function restartControlPlane(): Promise<void> {
  server.child.kill('SIGKILL');
  await server.exited;
  server = started(startServer(controlDir, port, env));
  await waitReady(port, server);
}

async function killAgent(s: Hosting): Promise<void> {
  s.agent.child.kill('SIGKILL');
  await s.agent.exited;
}
const startAgent = (s: Hosting) => (s.agent = started(startAgentProcess(['run'], s.dataDir, s.env)));

/**
 * An account on server a with a site (FILES and index.html) and a mailbox holding one message;
 * `withDatabase`, a database of ROWS rows there as well.
 */
async function accountOnA(name: string, withDatabase = false) {
  const { account, site, release, maildir, message } = await accountWithSite(call, {
    username: name,
    planId,
    placement: { web: a.id, mail: a.id, ...(withDatabase && { database: a.id }) },
    sourceDir: a.dataDir,
    files: FILES,
  });
  const database = withDatabase ? await databaseOnA(account.id, `${name}_app`) : null;
  /** The account placed on b, its site and message there (once), nothing of it on a. */
  const onlyOnB = async () => {
    await until(async () => readFileSync(path.join(release(b.dataDir), 'index.html'), 'utf8') === name);
    for (const f of FILES) expect(readFileSync(path.join(release(b.dataDir), f.path)).equals(f.content), f.path).toBe(true);
    await until(async () => filesHolding(maildir(b.dataDir), message).length > 0);
    expect(filesHolding(maildir(b.dataDir), message)).toHaveLength(1);
    await until(async () => !readdirSync(path.join(a.dataDir, 'accounts')).includes(account.id));
    expect((await call('GET', `/v1/accounts/${account.id}`)).body.placement).toMatchObject({ web: b.id, mail: b.id });
    if (database) {
      const count = `SELECT COUNT(*), COUNT(DISTINCT k), MIN(k), MAX(k) FROM \`${database}\`.kept`;
      expect((await mariadbSql(b.db!, count)).trim()).toBe(`${ROWS}\t${ROWS}\t1\t${ROWS}`);
      await until(async () => (await mariadbSql(a.db!, `SHOW DATABASES LIKE '${database}'`)).trim() === '');
    }
  };
  return { account, site, database, onlyOnB };
}

/** The account's database `name` on server a, in sync there, holding ROWS rows of 1 KB; its name. */
async function databaseOnA(accountId: string, name: string): Promise<string> {
  const made = await call('POST', '/v1/databases', { account_id: accountId, name });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  await until(async () => (await call('GET', `/v1/databases/${made.body.id}`)).body.sync_state === 'in_sync');
  // seq_1_to_N: MariaDB's Sequence engine (a table of every database).
  const statements = [
    `USE \`${made.body.name}\``,
    'CREATE TABLE kept (k int, v text)',
    `INSERT INTO kept SELECT seq, REPEAT(MD5(seq), 32) FROM seq_1_to_${ROWS}`,
  ];
  await mariadbSql(a.db!, statements.join('; '));
  return made.body.name as string;
}

/** Whether a process runs whose arguments include each of `args` (a database tool an agent started, say). */
function running(...args: string[]): boolean {
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .some((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return args.every((arg) => argv.includes(arg));
      } catch {
        return false; // gone meanwhile
      }
    });
}

/** The MariaDB tool `bin` running against server `s`'s MariaDB with `arg` among its arguments. */
const mariadbTool = (bin: string, s: Hosting, arg: string) => () =>
  Promise.resolve(running(bin, `--port=${s.db!.BERTH_IT_MARIADB!.split(':')[1]}`, arg));
/** Whether server `s`'s MariaDB holds a session in `database`: the agent's load, open while it loads (the probe's own has none). */
const loadingOn = (s: Hosting, database: string) => async () =>
  (await mariadbSql(s.db!, `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '${database}'`)).trim() !== '0';

/** The move of `accountId` to server b (its database too, `withDatabase`), started; `move()` reads it. */
async function moveToB(accountId: string, withDatabase = false, cutover: 'auto' | 'manual' = 'auto') {
  const to = { web: b.id, mail: b.id, ...(withDatabase && { database: b.id }) };
  const started = await call('POST', `/v1/accounts/${accountId}/move`, { to, cutover });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const move = async () => (await call('GET', `/v1/moves/${started.body.id}`)).body;
  const stepIs = async (step: string, state: string) =>
    (await move()).steps.some((s: { name: string; state: string }) => s.name === step && s.state === state);
  const ended = () =>
    until(
      async () => {
        const m = await move();
        return ['completed', 'failed', 'canceled'].includes(m.status) ? m : null;
      },
      300_000,
      100,
    );
  return { id: started.body.id as string, move, stepIs, ended };
}

/** Bytes of the move's copy that have reached the control plane's staging. */
const staged = (moveId: string) => bytesUnder([path.join(controlDir, 'staging', `move-${moveId}`)]).catch(() => 0);

describe('a move whose process is killed (SIGKILL) in the middle of a step', () => {
  it('the control plane, while the copy streams: started again, the move copies again and completes', async (ctx) => {
    if (process.env.TEST_DATABASE_URL) ctx.skip();
    const { account, onlyOnB } = await accountOnA('killcopycp');
    const m = await moveToB(account.id);
    await until(async () => (await staged(m.id)) > 0, 120_000, 5);
    expect(await m.stepIs('copy', 'running')).toBe(true);
    await restartControlPlane();
    const ended = await m.ended();
    expect(ended.status, JSON.stringify(ended.error)).toBe('completed');
    await onlyOnB();
  }, 600_000);

  it("the source's agent, while it streams the copy: started again, it is handed the copy again and the move completes", async (ctx) => {
    if (process.env.TEST_DATABASE_URL) ctx.skip();
    const { account, onlyOnB } = await accountOnA('killcopysrc');
    const m = await moveToB(account.id);
    await until(async () => (await staged(m.id)) > 0, 120_000, 5);
    await killAgent(a);
    startAgent(a);
    const ended = await m.ended();
    // The copy's task is still pending, and the server reachable: the agent back takes it again.
    expect(ended.status, JSON.stringify(ended.error)).toBe('completed');
    expect(ended.steps.every((s: { state: string }) => s.state === 'done')).toBe(true);
    await onlyOnB();
  }, 600_000);

  it("the target's agent, while it receives the copy sent ahead: started again, it is handed the copy again and the move completes", async (ctx) => {
    if (process.env.TEST_DATABASE_URL) ctx.skip();
    const { account, site, onlyOnB } = await accountOnA('killreceive');
    const m = await moveToB(account.id);
    // The site's copy being unpacked on the target, before it is renamed into place.
    const partial = path.join(b.dataDir, 'accounts', account.id, 'sites', site.id, '.staged', '.partial');
    await until(async () => existsSync(partial), 120_000, 5);
    await killAgent(b);
    startAgent(b);
    const ended = await m.ended();
    expect(ended.status, JSON.stringify(ended.error)).toBe('completed');
    expect(ended.steps.every((s: { state: string }) => s.state === 'done')).toBe(true);
    await onlyOnB();
  }, 600_000);

  it('the control plane, while the target lands the copy: started again, it lands again and completes', async (ctx) => {
    if (process.env.TEST_DATABASE_URL) ctx.skip();
    const { account, onlyOnB } = await accountOnA('killlandcp');
    const m = await moveToB(account.id);
    await until(() => m.stepIs('land', 'running'), 120_000, 5);
    await restartControlPlane();
    const ended = await m.ended();
    expect(ended.status, JSON.stringify(ended.error)).toBe('completed');
    await onlyOnB();
  }, 600_000);

  it("the target's agent, while it lands the copy: the move waits for it and completes once it is back", async (ctx) => {
    if (process.env.TEST_DATABASE_URL) ctx.skip();
    const { account, onlyOnB } = await accountOnA('killlandtgt');
    const m = await moveToB(account.id);
    await until(() => m.stepIs('land', 'running'), 120_000, 5);
    await killAgent(b);
    startAgent(b);
    const ended = await m.ended();
    expect(ended.status, JSON.stringify(ended.error)).toBe('completed');
    await onlyOnB();
  }, 600_000);

  it("the source's agent, while it forwards: the move completes without it, and the source gives the account up once back", async (ctx) => {
    if (process.env.TEST_DATABASE_URL) ctx.skip();
    const { account, onlyOnB } = await accountOnA('killforward');
    const m = await moveToB(account.id);
    await until(() => m.stepIs('forward', 'running'), 120_000, 5);
    await killAgent(a);
    const ended = await m.ended();
    expect(ended.status, JSON.stringify(ended.error)).toBe('completed');
    // Away through the cleanup: what it still holds is withdrawn when it comes back.
    expect(readdirSync(path.join(a.dataDir, 'accounts'))).toContain(account.id);
    startAgent(a);
    await onlyOnB();
  }, 600_000);

  describe.skipIf(noMariadb)(`its database (${noMariadb ? `skipped: ${noMariadb}` : 'a MariaDB per server'})`, () => {
    /**
     * A row of the source's table changed once the copy was loaded on the target (the move, manual,
     * ready), then the cutover asked for: the final copy dumps that table again, and the land loads it.
     */
    const changedAfterTheCopy = async (database: string, m: Awaited<ReturnType<typeof moveToB>>) => {
      await until(async () => (await m.move()).status === 'ready', 300_000, 100);
      await mariadbSql(a.db!, `UPDATE \`${database}\`.kept SET v = 'changed' WHERE k = 1`);
      expect((await call('POST', `/v1/moves/${m.id}/cutover`, {})).status).toBe(200);
    };
    const cases = [
      {
        title:
          "the source's agent, while it dumps the database for the copy: started again, it dumps it again and the move completes",
        username: 'killdumpsrc',
        tool: (database: string) => mariadbTool('mariadb-dump', a, database),
        step: 'copy',
        kill: async () => {
          await killAgent(a);
          startAgent(a);
        },
      },
      {
        title:
          'the control plane, while the source dumps the database for the copy: started again, the copy runs again and the move completes',
        username: 'killdumpcp',
        tool: (database: string) => mariadbTool('mariadb-dump', a, database),
        step: 'copy',
        kill: restartControlPlane,
      },
      {
        title:
          "the target's agent, while it loads the copy of the database ahead: started again, it is handed the load again and the move completes",
        username: 'killaheadtgt',
        tool: (database: string) => loadingOn(b, database),
        step: 'copy',
        kill: async () => {
          await killAgent(b);
          startAgent(b);
        },
      },
      {
        title:
          "the target's agent, while it lands what changed of the database since the copy: started again, it loads it again from the start and the move completes",
        username: 'killloadtgt',
        before: changedAfterTheCopy,
        tool: (database: string) => loadingOn(b, database),
        step: 'land',
        kill: async () => {
          await killAgent(b);
          startAgent(b);
        },
      },
    ];
    for (const c of cases)
      it(
        c.title,
        async (ctx) => {
          if (process.env.TEST_DATABASE_URL) ctx.skip();
          const { account, database, onlyOnB } = await accountOnA(c.username, true);
          const m = await moveToB(account.id, true, c.before ? 'manual' : 'auto');
          await c.before?.(database!, m);
          // Killed once the tool is seen running, its step under way.
          const tool = c.tool(database!);
          await until(async () => (await m.stepIs(c.step, 'running')) && (await tool()), 120_000, 5);
          await c.kill();
          const ended = await m.ended();
          expect(ended.status, JSON.stringify(ended.error)).toBe('completed');
          await onlyOnB();
          if (c.before)
            expect((await mariadbSql(b.db!, `SELECT v FROM \`${database}\`.kept WHERE k = 1`)).trim()).toBe('changed');
        },
        600_000,
      );

    it('canceled once its database was loaded on the target ahead: the target holds nothing of it, the source all of it', async (ctx) => {
      if (process.env.TEST_DATABASE_URL) ctx.skip();
      const { account, database } = await accountOnA('cancelahead', true);
      const started = await call('POST', `/v1/accounts/${account.id}/move`, {
        to: { web: b.id, mail: b.id, database: b.id },
        cutover: 'manual',
      });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      const move = async () => (await call('GET', `/v1/moves/${started.body.id}`)).body;
      await until(async () => (await move()).status === 'ready', 300_000, 100);
      const rows = `SELECT COUNT(*) FROM \`${database}\`.kept`;
      expect((await mariadbSql(b.db!, rows)).trim()).toBe(`${ROWS}`);
      expect((await call('POST', `/v1/moves/${started.body.id}/cancel`, {})).status).toBe(200);
      await until(async () => (await move()).status === 'canceled', 300_000, 100);
      expect((await mariadbSql(b.db!, `SHOW DATABASES LIKE '${database}'`)).trim()).toBe('');
      expect((await mariadbSql(a.db!, rows)).trim()).toBe(`${ROWS}`);
    }, 600_000);
  });
});
