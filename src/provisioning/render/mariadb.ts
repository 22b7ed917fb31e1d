/**
 * MariaDB statements for an account's databases, users and grants, from a plain
 * spec. Every identifier and string is checked against a narrow pattern before it is quoted,
 * so a name that got past the API's rules still cannot change a statement's meaning.
 */
import { createHash } from 'node:crypto';
import { type Static, Type } from 'typebox';

/** The statements below check each name against its narrow pattern before quoting it. */
const Identifier = Type.String({ minLength: 1, maxLength: 80 });

export const DatabaseSpec = Type.Object({ name: Identifier, charset: Identifier, collation: Identifier });
export type DatabaseSpec = Static<typeof DatabaseSpec>;

export const DatabaseAccountSpec = Type.Object({
  /** `<account username>_`: every database and user of the account starts with it. */
  prefix: Identifier,
  databases: Type.Array(DatabaseSpec),
  users: Type.Array(Type.Object({ username: Identifier, passwordHash: Type.String({ maxLength: 200 }), locked: Type.Boolean() })),
  /** The connections each user may hold at once (the plan's `max_database_connections`); absent from a spec older than it: left as the server has it. */
  maxUserConnections: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  /** `privileges`: `["ALL"]` or the API's names (`CREATE_TEMPORARY_TABLES`). */
  grants: Type.Array(
    Type.Object({ database: Identifier, username: Identifier, privileges: Type.Array(Type.String({ maxLength: 32 })) }),
  ),
});
export type DatabaseAccountSpec = Static<typeof DatabaseAccountSpec>;

const TableName = Type.String({ maxLength: 64 });
const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

/** Tables of a database, by name: what a partial dump leaves out, or a partial load drops. */
export const TableNames = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100_000 });
/** A move's final copy loaded in part: the database kept, the tables `drop` names dropped, the dump's loaded. */
export const PartialLoad = Type.Object({ drop: TableNames });
export type PartialLoad = Static<typeof PartialLoad>;

/**
 * mysql_native_password's stored form, `*` and the hex of SHA1(SHA1(password)): what MariaDB
 * verifies (`IDENTIFIED BY PASSWORD`), so the password itself is never kept or sent.
 */
export const nativePasswordHash = (password: string): string =>
  `*${createHash('sha1').update(createHash('sha1').update(password, 'utf8').digest()).digest('hex').toUpperCase()}`;

/** The SHA-256 of `SHOW CREATE` rows taken together, as `TableChecksums` holds them (of none: a database without views, routines or events). */
export const definitionsDigest = (rows: readonly string[]): string =>
  createHash('sha256').update(JSON.stringify(rows)).digest('hex');

/**
 * A database's tables, each with its `CHECKSUM TABLE` (null where its engine gives none), and the
 * server's version: a checksum is compared only with one the same version computed (MariaDB
 * changed how some columns are stored, and so summed, between versions). What the checksums do
 * not cover, for a move's final copy to tell which tables changed since a copy: each table's
 * definition with its triggers (SHA-256 of their `SHOW CREATE`), the views' names, and one SHA-256
 * of the views', routines' and events' `SHOW CREATE` (absent where the database holds another kind
 * of table, a sequence: then no table can be told unchanged).
 */
export const TableChecksums = Type.Object({
  version: Type.String({ maxLength: 200 }),
  tables: Type.Record(TableName, Type.Union([Type.String({ maxLength: 40 }), Type.Null()])),
  definitions: Type.Optional(Type.Record(TableName, Sha256)),
  views: Type.Optional(Type.Array(TableName, { maxItems: 100_000 })),
  objects: Type.Optional(Sha256),
});
export type TableChecksums = Static<typeof TableChecksums>;

/** The database-level privileges, as the API names them (`LOCK_TABLES` is SQL's `LOCK TABLES`). */
export const DATABASE_PRIVILEGES = [
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'CREATE',
  'DROP',
  'INDEX',
  'ALTER',
  'CREATE_TEMPORARY_TABLES',
  'LOCK_TABLES',
  'EXECUTE',
  'CREATE_VIEW',
  'SHOW_VIEW',
  'CREATE_ROUTINE',
  'ALTER_ROUTINE',
  'EVENT',
  'TRIGGER',
  'REFERENCES',
] as const;

const NAME = /^[a-z0-9_]{1,80}$/;
const WORD = /^[a-z0-9_]{1,64}$/;
const HASH = /^\*[0-9A-F]{40}$/;
/** A user's host: a name, an address, a pattern (`%`) or a network with its mask (`127.0.0.0/255.0.0.0`). */
const HOST = /^[A-Za-z0-9.:%_/-]{1,255}$/;
const PRIVILEGE = /^[A-Z_]{3,32}$/;

function checked(value: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value)) throw new Error(`refusing an unsafe ${what}: ${JSON.stringify(value.slice(0, 100))}`);
  return value;
}

/** A database or table name in backquotes (a backquote doubled, though the pattern allows none). */
export const quoteName = (name: string): string => `\`${checked(name, NAME, 'name').replace(/`/g, '``')}\``;

/** A string literal: backslash and quote escaped (MariaDB's default sql_mode reads backslashes). */
export const quoteString = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** `'user'@'host'`. */
export const userAt = (username: string, host: string): string =>
  `${quoteString(checked(username, NAME, 'user name'))}@${quoteString(checked(host, HOST, 'host'))}`;

/** A user's password, as the server keeps it (a `mysql_native_password` hash). */
const identifiedBy = (passwordHash: string) =>
  `IDENTIFIED BY PASSWORD ${quoteString(checked(passwordHash, HASH, 'password hash'))}`;

/**
 * The target of a database-level grant. In GRANT, `_` and `%` in a database name are
 * wildcards: `alice_shop` would also match `aliceXshop`. Escaped, it matches itself only.
 */
export const grantTarget = (database: string): string => `\`${grantPattern(database)}\`.*`;

/** A database name as GRANT stores it (`alice\_shop`): what a grant found on the server is compared with. */
export const grantPattern = (database: string): string => checked(database, NAME, 'name').replace(/_/g, '\\_');

/** Any name MariaDB takes for a table (at most 64 characters, none of them NUL). */
const TABLE = /^[^\0]{1,64}$/u;

/** An object of a database (a table, view, trigger, routine or event), the account's own name quoted whole (a backquote doubled). */
const quoteIn = (database: string, name: string) =>
  `${quoteName(database)}.\`${checked(name, TABLE, 'object name').replace(/`/g, '``')}\``;

const PATTERN = /^[A-Za-z0-9_\\%$-]{1,200}$/;

/** The API's privilege names in SQL: `ALL` → `ALL PRIVILEGES`, `LOCK_TABLES` → `LOCK TABLES`. */
const sqlPrivileges = (privileges: string[]): string =>
  privileges.map((p) => (p === 'ALL' ? 'ALL PRIVILEGES' : checked(p, PRIVILEGE, 'privilege').replace(/_/g, ' '))).join(', ');

const connections = (n: number): number => {
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new Error(`refusing an unsafe connection limit: ${n}`);
  return n;
};

const charsetOf = (d: DatabaseSpec) =>
  `CHARACTER SET ${checked(d.charset, WORD, 'character set')} COLLATE ${checked(d.collation, WORD, 'collation')}`;

export const sql = {
  createDatabase: (d: DatabaseSpec) => `CREATE DATABASE IF NOT EXISTS ${quoteName(d.name)} ${charsetOf(d)}`,
  alterDatabase: (d: DatabaseSpec) => `ALTER DATABASE ${quoteName(d.name)} ${charsetOf(d)}`,
  dropDatabase: (name: string) => `DROP DATABASE IF EXISTS ${quoteName(name)}`,
  createUser: (u: DatabaseAccountSpec['users'][number], host: string) =>
    `CREATE USER IF NOT EXISTS ${userAt(u.username, host)} ${identifiedBy(u.passwordHash)}`,
  alterUser: (u: DatabaseAccountSpec['users'][number], host: string, maxConnections?: number) => {
    const limit = maxConnections === undefined ? '' : ` WITH MAX_USER_CONNECTIONS ${connections(maxConnections)}`;
    return `ALTER USER ${userAt(u.username, host)} ${identifiedBy(u.passwordHash)}${limit} ACCOUNT ${u.locked ? 'LOCK' : 'UNLOCK'}`;
  },
  dropUser: (username: string, host: string) => `DROP USER IF EXISTS ${userAt(username, host)}`,
  /** The user of one load of a dump (drivers/mariadb.ts). */
  createLoader: (username: string, host: string, passwordHash: string) =>
    `CREATE USER ${userAt(username, host)} ${identifiedBy(passwordHash)}`,
  /** What a load's user needs besides its database: to make objects with the account's users as their definers. */
  grantSetUser: (username: string, host: string) => `GRANT SET USER ON *.* TO ${userAt(username, host)}`,
  grant: (database: string, username: string, host: string, privileges: string[]) =>
    `GRANT ${sqlPrivileges(privileges)} ON ${grantTarget(database)} TO ${userAt(username, host)}`,
  revoke: (database: string, username: string, host: string, privileges: string[]) =>
    `REVOKE ${sqlPrivileges(privileges)} ON ${grantTarget(database)} FROM ${userAt(username, host)}`,
  /** Revokes a grant found on the server, by the pattern it was stored with (maybe a wildcard one). */
  revokeFound: (pattern: string, username: string, host: string) =>
    `REVOKE ALL PRIVILEGES ON \`${checked(pattern, PATTERN, 'grant pattern')}\`.* FROM ${userAt(username, host)}`,
  checksumTable: (database: string, table: string) => `CHECKSUM TABLE ${quoteIn(database, table)}`,
  showCreate: (kind: 'TABLE' | 'VIEW' | 'TRIGGER' | 'PROCEDURE' | 'FUNCTION' | 'EVENT', database: string, name: string) =>
    `SHOW CREATE ${kind} ${quoteIn(database, name)}`,
  dropTable: (database: string, table: string) => `DROP TABLE IF EXISTS ${quoteIn(database, table)}`,
  /** A database name as a command-line argument of the client tools (checked, so never an option). */
  dumpName: (name: string) => checked(name, NAME, 'name'),
  /** A table left out of a dump: an option whose value is taken whole (the name may start with `-`). */
  ignoreTable: (database: string, table: string) =>
    `--ignore-table=${checked(database, NAME, 'name')}.${checked(table, TABLE, 'table name')}`,
};

/**
 * The whole desired state as one script the `embedded` driver writes (and an operator could
 * run): idempotent creations, each user's password and lock, each grant exactly (revoked, then
 * granted). What is no longer desired is not in it: the `mariadb` driver finds and drops that
 * on the server.
 */
export function renderDatabaseState(spec: DatabaseAccountSpec, host: string): string {
  const lines = [
    `-- Berth: the databases, users and grants of the account prefix ${spec.prefix}`,
    ...spec.databases.map(sql.createDatabase),
    ...spec.databases.map(sql.alterDatabase),
    ...spec.users.flatMap((u) => [sql.createUser(u, host), sql.alterUser(u, host, spec.maxUserConnections)]),
    ...spec.grants.flatMap((g) => [
      sql.revoke(g.database, g.username, host, ['ALL']),
      sql.grant(g.database, g.username, host, g.privileges),
    ]),
  ];
  return `${lines.map((l) => (l.startsWith('--') ? l : `${l};`)).join('\n')}\n`;
}
