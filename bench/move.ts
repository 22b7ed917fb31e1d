/**
 * A move's figures: an account whose site holds BENCH_MOVE_MB (1,000) MB in files of 100 KB (half
 * random, half text) and, where MariaDB is installed and this runs as root, a database of
 * BENCH_MOVE_DB_MB (100) MB in rows of 1 KB in ten tables, moves between two agents (each a process of its own,
 * in its own directory, with the embedded drivers and a MariaDB of its own on its address,
 * scripts/daemons/db-up.sh), while 1 % of its files and rows are rewritten during the copy (the
 * rows all in one table, as a site's writes go to a few of its tables). Printed:
 * the copy's throughput (its bytes over the `copy` step's time: to the control plane and on to
 * the target; the files alone, the database's dump loaded on the target meanwhile) against `tar -cf - DIR | tar -xf -
 * -C DEST` of the same files in the same run (the mean time of one before the move and one of the
 * target's copy after it), and the freeze (from the freeze to the cutover: the final copy of what
 * changed, verified), the land's time and the whole time the account was frozen (to the thaw).
 */
import { type ChildProcess, execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { listenAgents } from '../src/app.js';
import { tarGz } from '../test/helpers/archives.js';
import { alive, readEnv } from '../test/helpers/daemon-files.js';
import { benchAgent, controlPlane } from './agents.js';

const MB = Number(process.env.BENCH_MOVE_MB ?? 1000);
const FILE_BYTES = 100 * 1024;
const CHANGED = 0.01;
const DB_MB = Number(process.env.BENCH_MOVE_DB_MB ?? 100);
/** Rows of 1 KB (MariaDB's RANDOM_BYTES gives at most 1,024), in DB_TABLES tables. */
const DB_ROWS = DB_MB * 1024;
const DB_TABLES = 10;
const TABLES = Array.from({ length: DB_TABLES }, (_, i) => `items_${i}`);
/** The account's database (its name starts with the account's username). */
const DB_NAME = 'benchmove_shop';
const root = path.resolve(import.meta.dirname, '..');
/** A MariaDB of each agent's own takes mariadbd and root (scripts/daemons/db-up.sh). */
const MARIADB = process.getuid?.() === 0 && spawnSync('mariadbd', ['--version']).status === 0;

/** Each agent's MariaDB, on its address: the agent's settings, and SQL run there as Berth's administrative account. */
function mariadbOn(address: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-bench-mariadb-'));
  execFileSync(path.join(root, 'scripts/daemons/db-up.sh'), [dir, address, '13306'], { stdio: 'ignore' });
  const env = readEnv(path.join(dir, 'db.env'));
  const admin = new URL(env.BERTH_MARIADB_URL as string);
  // Not execFileSync: the control plane runs in this process, and its copy must not wait for these.
  // The password in the environment, as the fleet test gives it, not on a command line.
  const sql = async (database: string, statement: string) => {
    const args = ['--no-defaults', `--host=${admin.hostname}`, `--port=${admin.port}`, `--user=${admin.username}`];
    const secret = { PATH: process.env.PATH, MYSQL_PWD: decodeURIComponent(admin.password) };
    return (
      await promisify(execFile)('mariadb', [...args, '-N', '-B', database, '-e', statement], { env: secret })
    ).stdout.trim();
  };
  /** Stopped, and its files removed once it has exited (it writes them until then). */
  const stop = async () => {
    const pid = Number(readFileSync(path.join(dir, 'mariadb/mariadb.pid'), 'utf8'));
    execFileSync(path.join(root, 'scripts/daemons/down.sh'), [dir]);
    await until(async () => !alive(pid));
    rmSync(dir, { recursive: true, force: true });
  };
  return { env, sql, stop };
}

const half = Buffer.from('<p>Berth moves what the account holds.</p>\n'.repeat(FILE_BYTES / 2 / 43 + 1)).subarray(
  0,
  FILE_BYTES / 2,
);
const fileAt = (dir: string, i: number) => path.join(dir, `d${Math.floor(i / 100)}`, `f${i}.html`);
const content = () => Buffer.concat([randomBytes(FILE_BYTES / 2), half]);

/**
 * `tar -cf - dir | tar -xf - -C dest`, two processes and a pipe between them, as a shell runs it.
 * Its copy goes into `kept`, removed when the move's benchmark ends, with the agents' directories:
 * removed at once, its 10,000 freed inodes would tax the move's file creations that follow (ext4's
 * `recently_deleted`, bench/README.md).
 */
async function tarPipe(dir: string, kept: string[]): Promise<number> {
  const dest = mkdtempSync(path.join(tmpdir(), 'berth-bench-tarpipe-'));
  kept.push(dest);
  const start = performance.now();
  const create = spawn('tar', ['-cf', '-', '-C', dir, '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const extract = spawn('tar', ['-xf', '-', '-C', dest], { stdio: ['pipe', 'ignore', 'inherit'] });
  create.stdout.pipe(extract.stdin);
  const exited = (c: ChildProcess) => new Promise<number | null>((resolve) => c.on('exit', resolve));
  const codes = await Promise.all([exited(create), exited(extract)]);
  if (codes.some((c) => c !== 0)) throw new Error(`tar pipe failed (${codes.join(', ')})`);
  return performance.now() - start;
}

/** Looks every 100 ms: the figures are the move's own step times, and each look costs the control plane (this process). */
const until = async <T>(probe: () => Promise<T | null | undefined | false>, ms = 300_000): Promise<T> => {
  for (const start = performance.now(); performance.now() - start < ms; await new Promise((r) => setTimeout(r, 100))) {
    const v = await probe();
    if (v) return v;
  }
  throw new Error('not in time');
};

interface Step {
  name: string;
  started_at: string | null;
  ended_at: string | null;
}

export async function moveBench() {
  const t = await controlPlane({ BERTH_MOVE_TTL_S: '5' });
  const post = async (url: string, body: unknown) => {
    const r = await t.post(url, body);
    if (r.status >= 300) throw new Error(`${url}: ${r.status} ${r.text}`);
    return r.body;
  };
  const controller = new AbortController();
  const agents: Awaited<ReturnType<typeof benchAgent>>[] = [];
  const mariadbs: ReturnType<typeof mariadbOn>[] = [];
  const copies: string[] = [];
  try {
    const url = `https://127.0.0.1:${await listenAgents(t.app, t.config)}`;
    for (const [name, ipv4] of [
      ['move-a', '127.0.0.41'],
      ['move-b', '127.0.0.42'],
    ] as const) {
      const db = MARIADB ? mariadbOn(ipv4) : null;
      if (db) mariadbs.push(db);
      const roles = db ? ['web', 'database'] : ['web'];
      agents.push(await benchAgent(t, url, { name, roles, ipv4 }, controller.signal, db?.env));
    }
    const [a, b] = agents as [(typeof agents)[0], (typeof agents)[0]];
    const [dbA, dbB] = mariadbs;
    const plan = await post('/v1/plans', {
      name: 'bench-move',
      max_sites: 1,
      disk_quota_mb: 4 * MB,
      max_backups: 1,
      max_domains: 1,
      max_email_accounts: 1,
      max_email_quota_mb: 1,
      max_dns_records_per_domain: 10,
    });
    const account = await post('/v1/accounts', {
      username: 'benchmove',
      contact_email: 'b@example.com',
      plan_id: plan.id,
      placement: dbA ? { web: a.id, database: a.id } : { web: a.id },
    });
    await post('/v1/domains', { account_id: account.id, name: 'move-bench.example.com' });
    const site = await post('/v1/sites', { account_id: account.id, hostname: 'move-bench.example.com' });
    await until(async () => (await t.get(`/v1/sites/${site.id}`)).body.status === 'active');
    const deployed = await t.app.inject({
      method: 'POST',
      url: `/v1/sites/${site.id}/deployments`,
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/gzip' },
      payload: tarGz([{ path: 'index.html', content: 'moved' }]),
    });
    if (deployed.statusCode !== 202) throw new Error(`deployment: ${deployed.body}`);
    // What the site wrote on its server, once its release is live there: the files to move.
    const live = path.join(a.dataDir, 'accounts', account.id, 'sites', site.id, 'current');
    await until(async () => existsSync(path.join(live, 'index.html')));
    const files = Math.round((MB * 1024 * 1024) / FILE_BYTES);
    for (let i = 0; i < files; i++) {
      if (i % 100 === 0) mkdirSync(path.dirname(fileAt(live, i)), { recursive: true });
      writeFileSync(fileAt(live, i), content());
    }
    // The database, with its rows, on the source's MariaDB once its unit is applied there.
    if (dbA) {
      const { id } = await post('/v1/databases', { account_id: account.id, name: DB_NAME });
      await until(async () => (await t.get(`/v1/databases/${id}`)).body.sync_state === 'in_sync');
      for (const table of TABLES) {
        await dbA.sql(DB_NAME, `CREATE TABLE ${table} (id INT PRIMARY KEY, v VARBINARY(1024) NOT NULL)`);
        await dbA.sql(DB_NAME, `INSERT INTO ${table} SELECT seq, RANDOM_BYTES(1024) FROM seq_1_to_${DB_ROWS / DB_TABLES}`);
      }
      // InnoDB writes the rows out in the background for a while: done before the reference is timed.
      await dbA.sql(DB_NAME, 'SET GLOBAL innodb_max_dirty_pages_pct = 0');
      await until(async () =>
        (await dbA.sql(DB_NAME, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")).endsWith('\t0'),
      );
    }
    // Each measured from the same start: the files written out (not still being written back
    // meanwhile), and what the one before it wrote and removed written out too.
    execFileSync('sync');
    const tarBeforeMs = await tarPipe(live, copies);
    execFileSync('sync');

    const move = await post(`/v1/accounts/${account.id}/move`, { to: dbA ? { web: b.id, database: b.id } : { web: b.id } });
    const step = (m: { steps: Step[] }, name: string) => m.steps.find((s) => s.name === name) as Step;
    // 1 % of the files rewritten while the copy runs.
    await until(async () => step((await t.get(`/v1/moves/${move.id}`)).body, 'copy').started_at !== null);
    for (let i = 0; i < files * CHANGED; i++) writeFileSync(fileAt(live, Math.floor((i * files) / (files * CHANGED))), content());
    // 1 % of the rows rewritten, all in one table, once the copy's dump is under way (its snapshot
    // taken without them: its rows are arriving); the rows as the account leaves them. Looked for
    // in the staging, not with a client: a process started from this one holds the copy's relay.
    const checksum = async (on: NonNullable<typeof dbA>) => on.sql(DB_NAME, `CHECKSUM TABLE ${TABLES.join(', ')}`);
    if (dbA) {
      // Written beside its name until whole (`.partial`), then renamed.
      const dump = path.join(t.config.dataDir, 'staging', `move-${move.id}`, 'databases', `${DB_NAME}.sql`);
      const arrived = (file: string) => (statSync(file, { throwIfNoEntry: false })?.size ?? 0) > 2 ** 20;
      await until(async () => arrived(`${dump}.partial`) || arrived(dump));
      await dbA.sql(DB_NAME, `UPDATE ${TABLES[0]} SET v = RANDOM_BYTES(1024) WHERE id % ${1 / (CHANGED * DB_TABLES)} = 0`);
    }
    const rowsLeft = dbA && (await checksum(dbA));
    const done = await until(async () => {
      const m = (await t.get(`/v1/moves/${move.id}`)).body;
      if (m.status === 'failed') throw new Error(`move failed: ${JSON.stringify(m.error)}`);
      return ['forwarding', 'completed'].includes(m.status) && m;
    });
    // The reference again, of the copy the target now serves: the machine's pace before and
    // after the move, which on a shared machine can differ several times over.
    const moved = path.join(b.dataDir, 'accounts', account.id, 'sites', site.id, 'current');
    await until(async () => existsSync(fileAt(moved, files - 1))); // its release switched to whole
    execFileSync('sync');
    const tarAfterMs = await tarPipe(moved, copies);
    // Every row on the target, the rewritten ones as rewritten last.
    if (dbB && (await checksum(dbB)) !== rowsLeft) throw new Error('the database differs on the target');
    const ms = (s: Step) => Date.parse(s.ended_at as string) - Date.parse(s.started_at as string);
    const copyMs = ms(step(done, 'copy'));
    const tarMs = (tarBeforeMs + tarAfterMs) / 2;
    return {
      mb: MB,
      files,
      dbMb: dbA ? DB_MB : 0,
      tarMs,
      tarBeforeMs,
      tarAfterMs,
      copyMs,
      ratio: tarMs / copyMs,
      freezeMs: Date.parse(done.cut_over_at) - Date.parse(done.frozen_at),
      finalCopyMs: ms(step(done, 'final_copy')),
      // After the cutover the target lands the copy into its release; the account stays frozen
      // until the thaw that follows.
      landMs: ms(step(done, 'land')),
      frozenMs: Date.parse(step(done, 'thaw').ended_at as string) - Date.parse(done.frozen_at),
    };
  } finally {
    controller.abort();
    for (const agent of agents) await agent.stop();
    for (const db of mariadbs) await db.stop().catch((err: unknown) => console.error(err));
    await t.close();
    for (const dir of copies) rmSync(dir, { recursive: true, force: true });
  }
}
