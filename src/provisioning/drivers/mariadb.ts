import { createHash, randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import mysql, { type Connection, type QueryError, type RowDataPacket } from 'mysql2/promise';
import { tiedSpawn } from '../../lib/tied-spawn.js';
import type { DatabaseDriver } from '../driver.js';
import {
  DATABASE_PRIVILEGES,
  definitionsDigest,
  grantPattern,
  nativePasswordHash,
  sql,
  type DatabaseAccountSpec,
  type DatabaseSpec,
  type PartialLoad,
  type TableChecksums,
} from '../render/mariadb.js';
import { refusedDefiner } from './dump-definers.js';
import { DumpStatements } from './dump-statements.js';

/** The columns of a `SHOW CREATE` that a dump loaded on another server does not reproduce. */
const NOT_COPIED = new Set(['Created', 'Database Collation']);

export interface MariaDbOptions {
  /** `mysql://user:password@host:port`: an administrative account (all privileges, GRANT OPTION). */
  url: string;
  /** The host part of every user Berth makes. */
  userHost: string;
  dumpBin: string;
}

/**
 * What the load of a dump does not read statements under (runStatements): SQL modes that change
 * what ends a quoted string, and client character sets whose multi-byte characters may end in a
 * quote or a backslash.
 */
const UNREAD = new Set(['ansi_quotes', 'no_backslash_escapes', 'big5', 'cp932', 'gbk', 'sjis', 'gb18030']);
/** A statement that inserts rows (`mariadb-dump`'s many): it cannot set a definer. */
const ROWS = /^\s*INSERT INTO /;
/**
 * The start of the name of each user a load of `database` runs as (its own: two loads never share
 * one): no account's user starts so, their names start with a letter.
 */
const loadersOf = (database: string) => `_berth_load_${createHash('sha256').update(database).digest('hex').slice(0, 16)}_`;

/** What `ALL` amounts to, as the server names the privileges. */
const EVERY_PRIVILEGE: string[] = DATABASE_PRIVILEGES.map((p) => p.replace(/_/g, ' '));

/** A LIKE pattern for names starting with `prefix` (`_` is a LIKE wildcard too). */
const startingWith = (prefix: string) => `${prefix.replace(/[\\_%]/g, (c) => `\\${c}`)}%`;
const apiName = (privilege: string) => privilege.replace(/ /g, '_');

interface Login {
  host: string;
  port: number;
  user: string;
  password: string;
}

function loginOf(url: string): Login {
  const u = new URL(url);
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

/**
 * Reconciles accounts onto a MariaDB server through an administrative connection (mysql2): it
 * reads what exists under the account's prefix (information_schema, mysql.user) and issues only
 * the statements that make it equal to the spec, so applying twice changes nothing. Passwords
 * reach the server only as hashes. Backups and moves dump with `mariadb-dump`, the password in
 * its environment (never on a command line or on disk), and load through a connection of this process.
 */
export class MariaDbDatabaseDriver implements DatabaseDriver {
  readonly name = 'mariadb';
  private readonly login: Login;

  constructor(private readonly options: MariaDbOptions) {
    this.login = loginOf(options.url);
  }

  /** One connection per apply: applies are rare and short, and nothing is left open at shutdown. */
  private async session<T>(work: (c: Connection) => Promise<T>): Promise<T> {
    const c = await mysql.createConnection({ ...this.login, connectTimeout: 10_000, multipleStatements: false });
    try {
      return await work(c);
    } catch (err) {
      // The message becomes the unit's sync_error: a server that quoted a statement must not show a hash.
      throw new Error(String((err as Error).message).replace(/\*[0-9A-F]{40}/g, '*<hash>'));
    } finally {
      await c.end().catch(() => c.destroy());
    }
  }

  async applyAccount(spec: DatabaseAccountSpec): Promise<Map<string, number>> {
    const host = this.options.userHost;
    return this.session(async (c) => {
      const like = startingWith(spec.prefix);
      const [schemas] = await c.query<RowDataPacket[]>(
        'SELECT SCHEMA_NAME AS name, DEFAULT_CHARACTER_SET_NAME AS charset, DEFAULT_COLLATION_NAME AS collation FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?',
        [like],
      );
      const existing = new Map(schemas.map((s) => [String(s.name), s]));
      for (const d of spec.databases) {
        const found = existing.get(d.name);
        if (!found) await c.query(sql.createDatabase(d));
        else if (found.charset !== d.charset || found.collation !== d.collation) await c.query(sql.alterDatabase(d));
      }

      const wanted = new Set(spec.users.map((u) => u.username));
      for (const u of spec.users) {
        await c.query(sql.createUser(u, host));
        await c.query(sql.alterUser(u, host, spec.maxUserConnections));
        // A lock refuses new logins only; the sessions already open end now.
        if (u.locked) await this.endSessions(c, u.username);
      }
      await this.reconcileGrants(c, spec, host);

      const [users] = await c.query<RowDataPacket[]>('SELECT User AS user, Host AS host FROM mysql.user WHERE User LIKE ?', [
        like,
      ]);
      for (const u of users) {
        if (wanted.has(String(u.user)) && u.host === host) continue;
        if (!wanted.has(String(u.user))) await this.endSessions(c, String(u.user));
        await c.query(sql.dropUser(String(u.user), String(u.host)));
      }
      const names = new Set(spec.databases.map((d) => d.name));
      for (const name of existing.keys()) if (!names.has(name)) await c.query(sql.dropDatabase(name));
      const sizes = await this.sizes(c, like);
      return new Map(spec.databases.map((d) => [d.name, sizes.get(d.name) ?? 0]));
    });
  }

  /**
   * Each (user, database) pair gets exactly its privileges; every other grant of the account's
   * users goes, wildcard ones included (`alice_shop` unescaped also matches `aliceXshop`): grants
   * are compared by the pattern the server stored, never by the name it might match. A locked
   * user holds none: the lock refuses logins only, and the events the user defined (MariaDB's
   * event scheduler) would go on writing with its privileges, into a suspended account's
   * databases or a moving one's frozen source or its target's copy before the thaw.
   */
  private async reconcileGrants(c: Connection, spec: DatabaseAccountSpec, host: string): Promise<void> {
    const [rows] = await c.query<RowDataPacket[]>(
      'SELECT GRANTEE AS grantee, TABLE_SCHEMA AS db, PRIVILEGE_TYPE AS privilege FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE LIKE ?',
      [`'${startingWith(spec.prefix)}`],
    );
    const key = (user: string, pattern: string) => `${user}\u0000${pattern}`;
    const found = new Map<string, Set<string>>();
    for (const r of rows) {
      const m = /^'(.*)'@'(.*)'$/.exec(String(r.grantee));
      if (!m || m[2] !== host) continue; // users at another host are dropped whole
      const k = key(m[1] as string, String(r.db));
      found.set(k, (found.get(k) ?? new Set()).add(String(r.privilege)));
    }
    const locked = new Set(spec.users.filter((u) => u.locked).map((u) => u.username));
    for (const g of spec.grants.filter((grant) => !locked.has(grant.username))) {
      const k = key(g.username, grantPattern(g.database));
      const held = found.get(k) ?? new Set<string>();
      found.delete(k);
      const wanted = g.privileges.includes('ALL') ? EVERY_PRIVILEGE : g.privileges.map((p) => p.replace(/_/g, ' '));
      const extra = [...held].filter((p) => !wanted.includes(p));
      const missing = wanted.filter((p) => !held.has(p));
      if (extra.length) await c.query(sql.revoke(g.database, g.username, host, extra.map(apiName)));
      if (missing.length) {
        const privileges = g.privileges.includes('ALL') ? ['ALL'] : missing.map(apiName);
        await c.query(sql.grant(g.database, g.username, host, privileges));
      }
    }
    const users = new Set(spec.users.map((u) => u.username));
    for (const k of found.keys()) {
      const [user, pattern] = k.split('\u0000') as [string, string];
      if (users.has(user)) await c.query(sql.revokeFound(pattern, user, host));
    }
  }

  private async endSessions(c: Connection, username: string): Promise<void> {
    const [rows] = await c.query<RowDataPacket[]>('SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ?', [
      username,
    ]);
    for (const r of rows) await c.query(`KILL CONNECTION ${Number(r.id)}`).catch(() => undefined); // gone already
  }

  private async sizes(c: Connection, like = '%'): Promise<Map<string, number>> {
    const [rows] = await c.query<RowDataPacket[]>(
      'SELECT TABLE_SCHEMA AS name, SUM(DATA_LENGTH + INDEX_LENGTH) AS bytes FROM information_schema.TABLES WHERE TABLE_SCHEMA LIKE ? GROUP BY TABLE_SCHEMA',
      [like],
    );
    return new Map(rows.map((r) => [String(r.name), Number(r.bytes ?? 0)]));
  }

  async removeAccount(prefix: string): Promise<void> {
    await this.session(async (c) => {
      const like = startingWith(prefix);
      const [users] = await c.query<RowDataPacket[]>('SELECT User AS user, Host AS host FROM mysql.user WHERE User LIKE ?', [
        like,
      ]);
      for (const u of users) {
        await c.query(sql.dropUser(String(u.user), String(u.host)));
        await this.endSessions(c, String(u.user));
      }
      const [schemas] = await c.query<RowDataPacket[]>(
        'SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?',
        [like],
      );
      for (const s of schemas) {
        await c.query(sql.dropDatabase(String(s.name)));
        // A load's user left by a process that died in the load.
        const [loaders] = await c.query<RowDataPacket[]>('SELECT User AS user, Host AS host FROM mysql.user WHERE User LIKE ?', [
          startingWith(loadersOf(String(s.name))),
        ]);
        for (const l of loaders) await c.query(sql.dropUser(String(l.user), String(l.host)));
      }
    });
  }

  measure(): Promise<Map<string, number>> {
    return this.session((c) => this.sizes(c));
  }

  async dump(database: string, out: Writable, except?: readonly string[]): Promise<void> {
    const objects = except ? except.map((t) => sql.ignoreTable(database, t)) : ['--routines', '--events'];
    await this.run(
      this.options.dumpBin,
      ['--single-transaction', '--triggers', '--hex-blob', ...objects, sql.dumpName(database)],
      { stdout: out },
    );
  }

  /**
   * Loads a dump (made on another server: a move's source, a backup's) into `database`, re-created
   * first unless `partial`. Its statements run as a user of the load's own, made for it and dropped
   * after: every privilege on that database and the right to set a definer (SET USER), nothing on
   * any other database or the server (no FILE, no grants, no users), so a dump can change nothing
   * but its database; each definer it sets must be a user of the account (dump-definers.ts).
   */
  async load(database: DatabaseSpec, dump: Readable, partial?: PartialLoad): Promise<void> {
    dump.on('error', () => undefined); // told by the load (`errored`), whenever it comes
    const loader = { user: loadersOf(database.name) + randomBytes(4).toString('hex'), password: randomBytes(24).toString('hex') };
    let host: string | undefined;
    let loaded = false;
    try {
      host = await this.session(async (c) => {
        if (!partial) await c.query(sql.dropDatabase(database.name));
        await c.query(sql.createDatabase(database));
        for (const table of partial?.drop ?? []) await c.query(sql.dropTable(database.name, table));
        // At the host the administrative account logs in from: the load's connection comes from there too.
        const [me] = await c.query<RowDataPacket[]>('SELECT CURRENT_USER() AS me');
        const at = String(me[0]?.me).replace(/^.*@/, '');
        await c.query(sql.createLoader(loader.user, at, nativePasswordHash(loader.password)));
        await c.query(sql.grant(database.name, loader.user, at, ['ALL']));
        await c.query(sql.grantSetUser(loader.user, at));
        return at;
      });
      await this.runStatements(database.name, dump, loader);
      loaded = true;
    } finally {
      // What is left of it (a load that failed) is read by nobody: its sender is not kept waiting.
      dump.destroy();
      // One a failed drop leaves (or a process that died in the load) goes with the account (removeAccount).
      const at = host;
      if (at !== undefined)
        await this.session((c) => c.query(sql.dropUser(loader.user, at))).catch((err: unknown) => {
          if (loaded) throw err;
        });
    }
  }

  /**
   * A dump's statements (dump-statements.ts), run in turn on a connection of the load's user to
   * the database: each piece's while the next is read and split. Their bytes go as they came
   * (character set binary, the dump's own `SET NAMES` telling the server how to read them), never
   * formatted (`queryFormat`: no `?` is a placeholder). A statement is looked at before it is sent
   * (its definers), and the session after it: the statements are read as the server reads them
   * only while it takes backslash escapes and `"` quotes strings, in a character set whose
   * multi-byte characters hold no quote or backslash. The first one refused ends the load, and
   * so does an input that fails as it is read.
   */
  private async runStatements(name: string, dump: Readable, loader: { user: string; password: string }): Promise<void> {
    const c = await mysql.createConnection({
      ...this.login,
      ...loader,
      database: sql.dumpName(name),
      charset: 'BINARY',
      // Without session tracking, mysql2 does not switch to encoding the statements by what the
      // dump's `SET NAMES` sets (it would encode them again); nor may the server ask for a local file.
      flags: ['-SESSION_TRACK', '-LOCAL_FILES'],
      connectTimeout: 10_000,
      multipleStatements: false,
      queryFormat: (statement: string) => statement,
    });
    const statements = new DumpStatements();
    let count = 0;
    let refused: Error | undefined;
    const refuse = (why: string) => new Error(`the dump's statement ${count} was refused: ${why}`);
    const readable = async () => {
      const [rows] = await c.query<RowDataPacket[]>(
        'SELECT @@SESSION.sql_mode AS mode, @@SESSION.character_set_client AS client',
      );
      const [mode, client] = [String(rows[0]?.mode), String(rows[0]?.client)];
      const unread = [...mode.split(','), client].filter((m) => UNREAD.has(m.toLowerCase())).join(', ');
      if (unread && count) throw refuse(`after it, the session reads statements under ${unread}, which the load does not`);
      if (unread) throw new Error(`the load's session reads statements under ${unread}, which the load does not`);
    };
    const run = async (batch: string[]) => {
      for (const statement of batch) {
        count++;
        // An INSERT sets no definer; a dump is mostly those, of up to a MiB each.
        const why = ROWS.test(statement) ? null : refusedDefiner(statement, name, this.options.userHost);
        if (why) throw refuse(why);
        await c.query(statement).catch((err: QueryError) => {
          const code = err.errno ? `ERROR ${err.errno} (${err.sqlState}): ` : '';
          throw refuse(`${code}${err.message}`);
        });
        await readable();
      }
    };
    const begin = (work: Promise<void>) => {
      work.catch((err: Error) => {
        refused = err;
        dump.destroy(); // read no further
      });
      return work;
    };
    let running = begin(readable());
    try {
      for await (const chunk of dump) {
        const batch = statements.push(chunk as Buffer);
        if (batch.length === 0) continue;
        await running;
        running = begin(run(batch));
      }
      await running;
      await run(statements.end());
    } catch (err) {
      await running.catch(() => undefined);
      if (refused) throw refused;
      if (dump.errored) throw new Error(`the dump's input was cut off: ${dump.errored.message}`);
      throw err;
    } finally {
      await c.end().catch(() => c.destroy());
    }
  }

  async checksums(database: string): Promise<TableChecksums> {
    return this.session(async (c) => {
      const schema = sql.dumpName(database);
      /** The database's rows of an `information_schema` query: its columns `a` and `name`. */
      const pairs = async (query: string) =>
        (await c.query<RowDataPacket[]>(query, [schema]))[0].map((r) => [String(r.a), String(r.name)] as const);
      /**
       * The `SHOW CREATE` row of an object: its statement, SQL mode and character sets, less what a
       * dump loaded elsewhere never keeps (a trigger's `Created` time) or the database's own
       * collation (the API's, made the same on every server).
       */
      const created = async (kind: Parameters<typeof sql.showCreate>[0], name: string) => {
        const [rows] = await c.query<RowDataPacket[]>(sql.showCreate(kind, database, name));
        return JSON.stringify(Object.entries(rows[0] ?? {}).filter(([column]) => !NOT_COPIED.has(column)));
      };

      const sums = new Map<string, string | null>();
      const definitions = new Map<string, string>();
      const views: string[] = [];
      const objects: string[] = [];
      let otherKind = false;
      const triggers = new Map<string, string[]>();
      for (const [table, name] of await pairs(
        'SELECT EVENT_OBJECT_TABLE AS a, TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY TRIGGER_NAME',
      ))
        triggers.set(table, [...(triggers.get(table) ?? []), await created('TRIGGER', name)]);
      for (const [type, name] of await pairs(
        'SELECT TABLE_TYPE AS a, TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME',
      )) {
        if (type === 'VIEW') {
          views.push(name);
          objects.push(await created('VIEW', name));
        } else if (type === 'BASE TABLE' || type === 'SYSTEM VERSIONED') {
          const [rows] = await c.query<RowDataPacket[]>(sql.checksumTable(database, name));
          const sum = rows[0]?.Checksum as string | number | null | undefined;
          sums.set(name, sum === null || sum === undefined ? null : String(sum));
          definitions.set(name, definitionsDigest([await created('TABLE', name), ...(triggers.get(name) ?? [])]));
        } else otherKind = true;
      }
      for (const [type, name] of await pairs(
        'SELECT ROUTINE_TYPE AS a, ROUTINE_NAME AS name FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? ORDER BY ROUTINE_TYPE, ROUTINE_NAME',
      ))
        objects.push(await created(type === 'FUNCTION' ? 'FUNCTION' : 'PROCEDURE', name));
      for (const [, name] of await pairs(
        "SELECT 'EVENT' AS a, EVENT_NAME AS name FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ? ORDER BY EVENT_NAME",
      ))
        objects.push(await created('EVENT', name));
      const [version] = await c.query<RowDataPacket[]>('SELECT VERSION() AS version');
      return {
        version: String(version[0]?.version),
        tables: Object.fromEntries(sums),
        definitions: Object.fromEntries(definitions),
        views,
        ...(!otherKind && { objects: definitionsDigest(objects) }),
      };
    });
  }

  /**
   * Runs a MariaDB client tool as the administrative account; its stderr becomes the error. Its
   * output is ended only once it exited well, and destroyed otherwise; a reader that goes away
   * ends the tool (which would wait on a full pipe). The tool dies with this process (tied-spawn.ts).
   */
  private async run(bin: string, args: string[], io: { stdout: Writable }): Promise<void> {
    const { host, port, user, password } = this.login;
    const child = tiedSpawn(bin, ['--no-defaults', `--host=${host}`, `--port=${port}`, `--user=${user}`, ...args], {
      env: { PATH: process.env.PATH, MYSQL_PWD: password },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-2000)));
    const out = io.stdout;
    child.stdout?.pipe(out, { end: false });
    out.on('close', () => child.kill());
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    }).catch((err: unknown) => {
      out.destroy(err as Error);
      throw err;
    });
    if (code !== 0) {
      const err = new Error(`${bin} exited with ${code}: ${stderr.trim() || 'no message'}`);
      out.destroy(err);
      throw err;
    }
    await finished(out.end(), { readable: false });
  }
}
