import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { keyedMutex } from '../lib/mutex.js';
import { pgTimestampToRfc3339 } from '../lib/time.js';
import { turns } from '../lib/turns.js';
import { acquireDirLock, type DirLock } from './lock.js';
import { PgListener } from './pg-listener.js';
import { MAX_PREPARED, PgliteStatements } from './pglite-statements.js';

const TIMESTAMPTZ_OID = 1184;

interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

/** Something that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** The engine, where a statement is better written for it (see manyRows). */
  readonly kind?: 'postgres' | 'pglite';
}

/**
 * Many rows of plain columns (text, numbers, booleans: no timestamps), in no particular order:
 * `SELECT <columns> <from>`. PGlite decodes a result field by field in JavaScript (10,000 rows
 * of four columns: about 70 ms), so there each column comes back as one array (`array_agg` over
 * the same rows, so the arrays line up; about 14 ms, and cheaper for it to build than one JSON
 * document) and the rows are put together here. PostgreSQL's driver is faster with the rows.
 */
export async function manyRows<T>(
  q: Queryable,
  columns: readonly (keyof T & string)[],
  from: string,
  params: unknown[],
): Promise<T[]> {
  const select = `SELECT ${columns.join(', ')} ${from}`;
  if (q.kind !== 'pglite') return (await q.query<T>(select, params)).rows;
  const aggregated = columns.map((c) => `array_agg(${c}) AS ${c}`).join(', ');
  const r = await q.query<Record<string, unknown[] | null>>(`SELECT ${aggregated} FROM (${select}) t`, params);
  const arrays = columns.map((c) => r.rows[0]?.[c] ?? []);
  const rows: T[] = new Array<T>(arrays[0]?.length ?? 0);
  for (let i = 0; i < rows.length; i++) {
    const row: Record<string, unknown> = {};
    for (let j = 0; j < columns.length; j++) row[columns[j] as string] = (arrays[j] as unknown[])[i];
    rows[i] = row as T;
  }
  return rows;
}

/**
 * One database interface over PostgreSQL (`pg`) and the embedded PGlite, so every repository
 * writes the same SQL for both.
 */
export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs fn in a transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs several statements without parameters (migrations, pg-boss DDL). */
  exec(text: string): Promise<QueryResult<Record<string, unknown>>>;
  /**
   * Runs fn while holding a session advisory lock, so work that spans several transactions
   * (schema migrations, ours and pg-boss's; the apply of one unit) runs in one process at a
   * time. A name is hashed to the lock's key (a collision only serializes more).
   */
  withSessionLock<T>(key: number | string, fn: () => Promise<T>): Promise<T>;
  /**
   * Calls onNotify with the payload of every `NOTIFY channel` from any session, delivered when
   * the notifying transaction commits (never for one rolled back). Resolves to the unsubscribe.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The driver's parsers, except timestamps, which stay RFC 3339 text (see lib/time.ts). */
const typeParser = ((oid: number, format?: 'text' | 'binary'): unknown =>
  oid === TIMESTAMPTZ_OID ? pgTimestampToRfc3339 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser;

/**
 * Names statements so PostgreSQL parses and plans each distinct text once per connection
 * instead of on every call (it halves the cost of a small join). The texts are our own
 * constant SQL, so the set stays small; past the cap, statements run unnamed.
 */
class StatementNames {
  private readonly names = new Map<string, string>();
  config(text: string, values: unknown[]): pg.QueryConfig {
    let name = this.names.get(text);
    if (!name && this.names.size < MAX_PREPARED) {
      name = `b${this.names.size}`;
      this.names.set(text, name);
    }
    return { text, values, name };
  }
}

// bigint and numeric arrive as strings from both drivers; counts are cast to int in SQL instead.
class PostgresDb implements Db {
  readonly kind = 'postgres' as const;
  private readonly statements = new StatementNames();
  private readonly listener: PgListener;
  constructor(
    private readonly pool: pg.Pool,
    clientConfig: pg.ClientConfig,
  ) {
    this.listener = new PgListener(clientConfig);
  }

  async query<T>(text: string, params: unknown[] = []): Promise<QueryResult<T>> {
    const r = await this.pool.query(this.statements.config(text, params));
    return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
  }

  async exec(text: string): Promise<QueryResult<Record<string, unknown>>> {
    const r = (await this.pool.query(text)) as
      pg.QueryResult<Record<string, unknown>> | pg.QueryResult<Record<string, unknown>>[];
    const last = Array.isArray(r) ? r[r.length - 1] : r;
    return { rows: last?.rows ?? [], rowCount: last?.rowCount ?? 0 };
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // A transaction is one connection: statements sent at once (Promise.all over `tx`) run one
      // after another, in the order sent. pg queues them itself today, but deprecates it.
      let previous: Promise<unknown> = Promise.resolve();
      const tx: Queryable = {
        kind: this.kind,
        query: async <R>(text: string, params: unknown[] = []) => {
          const run = previous.then(() => client.query(this.statements.config(text, params)));
          previous = run.catch(() => undefined);
          const r = await run;
          return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
        },
      };
      const result = await fn(tx);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async withSessionLock<T>(key: number | string, fn: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const lockKey = typeof key === 'number' ? '$1::bigint' : 'hashtext($1)';
    try {
      await client.query(`SELECT pg_advisory_lock(${lockKey})`, [key]);
      try {
        return await fn();
      } finally {
        await client.query(`SELECT pg_advisory_unlock(${lockKey})`, [key]);
      }
    } finally {
      client.release();
    }
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    return this.listener.listen(channel, onNotify);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

const pgliteResult = <T>(r: { rows: T[]; affectedRows?: number }): QueryResult<T> => ({
  rows: r.rows,
  rowCount: Math.max(r.affectedRows ?? 0, r.rows.length),
});

class PgliteDb implements Db {
  readonly kind = 'pglite' as const;
  /**
   * PGlite runs a statement on the main thread, and Node handles every socket that epoll reports
   * ready in one go: 32 list requests read together ran their 3 ms statements back to back, a
   * 100 ms stretch in which no timer fired and no connection was accepted. libuv accepts one new
   * connection per turn of the loop, so a client that connected during a busy spell waited a
   * stretch for every client that connected before it (up to 2 s in the list benchmark, the p99
   * of a whole round). So statements start for at most 5 ms per turn.
   */
  private readonly turn = turns();
  private readonly statements: PgliteStatements;
  constructor(
    private readonly pg: PGlite,
    private readonly lock: DirLock | null,
  ) {
    this.statements = new PgliteStatements(pg);
  }

  /** The data directory as an uncompressed tarball, for `OpenDbOptions.image`. */
  image(): Promise<Blob> {
    return this.turn(() => this.pg.dumpDataDir('none'));
  }

  async query<T>(text: string, params: unknown[] = []): Promise<QueryResult<T>> {
    return pgliteResult(await this.turn(() => this.statements.query<T>(text, params)));
  }

  async exec(text: string): Promise<QueryResult<Record<string, unknown>>> {
    const results = await this.turn(() => this.pg.exec(text));
    const last = results[results.length - 1];
    return { rows: last?.rows ?? [], rowCount: last?.affectedRows ?? 0 };
  }

  // PGlite is one session: its transaction() holds a mutex so other queries wait, and rolls
  // the shared session back when fn throws, so a failed transaction never poisons later queries.
  // The whole transaction is one turn: its statements go to PGlite directly.
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.turn(() =>
      this.pg.transaction(async (t) =>
        fn({
          kind: this.kind,
          query: async <R>(text: string, params: unknown[] = []) =>
            pgliteResult(await this.statements.inTransaction<R>(text, params, () => t.query<R>(text, params))),
        }),
      ),
    );
  }

  // One process holds the data directory (its lock), but within it different job queues may work
  // on one thing at once (a restore and the database apply it sends): the lock is the process's
  // own, one caller per key at a time, as PostgreSQL's advisory locks are across processes.
  private readonly sessionLocks = keyedMutex();
  async withSessionLock<T>(key: number | string, fn: () => Promise<T>): Promise<T> {
    return this.sessionLocks(`${typeof key}:${key}`, fn);
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    return this.pg.listen(channel, onNotify);
  }

  async close(): Promise<void> {
    await this.pg.close();
    this.lock?.release();
  }
}

/**
 * V8 frees the WebAssembly code a process no longer runs (a function's baseline code once its
 * optimized code replaces it). On Node 24 that freeing at times aborts the process in a check of
 * V8's own JIT page registry (nodejs/node#64500, "jit_page_->allocations_.erase(addr) == 1"), and
 * PGlite is the WebAssembly it frees: six API test files freed 1,865 pieces of code between them.
 * Kept instead, it costs at most a spare copy of PGlite's compiled code, which a process compiles
 * once and shares between its databases (bench/HISTORY.md, "2026-12-04, night").
 */
function keepWasmCode() {
  setFlagsFromString('--no-wasm-code-gc');
}

async function createPglite(dir?: string, image?: Blob): Promise<PGlite> {
  keepWasmCode();
  const db = await PGlite.create(dir, { loadDataDir: image, parsers: { [TIMESTAMPTZ_OID]: pgTimestampToRfc3339 } });
  // A new WAL segment is 16 MB of zeros by default, written in 8 kB pieces into a file that
  // PGlite's in-memory file system grows (and copies) a little at a time: the transaction that
  // crossed into one (a 10,000-record sync, every third or so) paid 40-60 ms more at COMMIT.
  // Without it the segment is sized with one write. The zeros buy nothing here: PGlite runs
  // with fsync off (`wal_init_zero` exists for the file systems where they buy nothing either).
  await db.exec(`SET TIME ZONE 'UTC'; SET wal_init_zero = off`);
  return db;
}

export interface OpenDbOptions {
  databaseUrl: string | null;
  dataDir: string;
  /** PGlite only: keep the database in memory (tests). */
  inMemory?: boolean;
  /**
   * In memory only: start from this image of another database's data directory (`pgliteImage`)
   * rather than from a new cluster. A new one runs initdb, 1.5 s of CPU; an image loads in 0.4,
   * and the test suite opens a hundred databases.
   */
  image?: Blob;
  /** PostgreSQL connections: 20 unless given, never fewer than 2 (see openDb). */
  poolSize?: number;
}

/** An image of a PGlite database (in memory or not) to open others from (`OpenDbOptions.image`). */
export function pgliteImage(db: Db): Promise<Blob> {
  if (!(db instanceof PgliteDb)) throw new Error('only a PGlite database has an image');
  return db.image();
}

export async function openDb(opts: OpenDbOptions): Promise<Db> {
  if (opts.databaseUrl) {
    const clientConfig: pg.ClientConfig = {
      connectionString: opts.databaseUrl,
      options: '-c TimeZone=UTC',
      types: { getTypeParser: typeParser },
    };
    // A pool of one would wait for itself: migrate() holds its lock on one connection and applies on another.
    const pool = new pg.Pool({ ...clientConfig, max: Math.max(2, opts.poolSize ?? 20) });
    // An idle client losing its connection must not crash the process.
    pool.on('error', () => undefined);
    const db = new PostgresDb(pool, clientConfig);
    await db.query('SELECT 1');
    return db;
  }
  if (opts.inMemory) return new PgliteDb(await createPglite(undefined, opts.image), null);
  const dir = path.resolve(opts.dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const lock = acquireDirLock(dir);
  try {
    return new PgliteDb(await createPglite(dir), lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}
