import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Value } from 'typebox/value';
import { type BackupPart, type MoveCopy, type PartServers, RestoreRefused, type StagedPart } from '../../contribution.js';
import type { Db } from '../../db/client.js';
import type { JobQueue } from '../../jobs/queue.js';
import { exists } from '../../lib/disk.js';
import type { Clock } from '../../lib/time.js';
import type { AgentTask } from '../../provisioning/agent-units.js';
import type { DatabaseDriver } from '../../provisioning/driver.js';
import { type DatabaseSpec, type PartialLoad, TableChecksums } from '../../provisioning/render/mariadb.js';
import { findAccountById, lockBelowLimit, transferLimit } from '../accounts/index.js';
import { discardCopy, LOCAL_SERVER_ID, relayedTask, runAgentTask, sentAheadTo } from '../servers/index.js';
import * as repo from './repo.js';
import { databaseEvent, presentUser, toDatabase } from './representation.js';
import type { Database, DatabaseUser } from './schemas.js';
import { databaseReconciler, databaseUnits } from './unit.js';

/** What a backup's manifest holds of an account's databases. */
interface DatabasesManifest {
  databases?: Database[];
  database_users?: DatabaseUser[];
}

const CREDENTIALS = 'database-credentials.json';
const dumpFile = (staging: string, name: string) => path.join(staging, 'databases', `${name}.sql`);
/**
 * A move's record of the source's tables, frozen (`.target`: the copy's on the target, before the
 * final copy; `.loaded`: the target's once the final copy is loaded there).
 */
const checksumFile = (staging: string, name: string) => path.join(staging, 'databases', `${name}.checksums.json`);
/** A move's final copy of a database in part (`partial`: the tables the target drops; the dump holds the changed ones). */
const partialFile = (staging: string, name: string) => path.join(staging, 'databases', `${name}.partial.json`);
/** A move's record that a database's first copy was loaded on the target as it was dumped (`sendAhead` then has nothing to load). */
const loadedFile = (staging: string, name: string) => path.join(staging, 'databases', `${name}.loaded`);
/** A move's record that its copy's databases may be on the target before the cutover (to drop if it rolls back). */
const aheadFile = (listings: string) => path.join(listings, 'databases-ahead');
/** About a hundred bytes per table. */
const CHECKSUMS_MAX_BYTES = 32 * 1024 * 1024;

const dumpTask = (database: string, except?: string[]): AgentTask => ({
  action: 'database.dump',
  database,
  ...(except && { except }),
});
const loadTask = (d: DatabaseSpec, partial?: PartialLoad): AgentTask => ({
  action: 'database.load',
  database: { name: d.name, charset: d.charset, collation: d.collation },
  ...(partial && { partial }),
});

/**
 * The tables whose checksums differ, or that one side lacks; between servers of different
 * versions, only those that one side lacks.
 */
export function differingTables(source: TableChecksums, target: TableChecksums): string[] {
  const [a, b] = [new Map(Object.entries(source.tables)), new Map(Object.entries(target.tables))];
  const compared = source.version === target.version;
  return [...new Set([...a.keys(), ...b.keys()])]
    .filter((t) => !a.has(t) || !b.has(t) || (compared && a.get(t) !== b.get(t)))
    .sort();
}

/**
 * What a move's final copy needs to dump of a database loaded on its target ahead of the freeze,
 * from the frozen source's checksums and the target's: `changed`, the tables whose rows or
 * definition (with triggers) differ or that the target lacks; `except`, what the dump leaves out
 * (the tables the same on both sides, and the views); `drop`, the target's tables the source no
 * longer has. Null when only a whole dump will do: the servers' versions differ, the views,
 * routines or events differ, or a side did not describe them.
 */
export function changedTables(
  source: TableChecksums,
  target: TableChecksums,
): { changed: string[]; except: string[]; drop: string[] } | null {
  if (source.version !== target.version || !source.definitions || !target.definitions) return null;
  if (source.objects === undefined || source.objects !== target.objects) return null;
  const [sums, theirs] = [new Map(Object.entries(source.tables)), new Map(Object.entries(target.tables))];
  const [defined, theirDefined] = [new Map(Object.entries(source.definitions)), new Map(Object.entries(target.definitions))];
  const same = (t: string) =>
    sums.get(t) !== null && sums.get(t) === theirs.get(t) && defined.has(t) && defined.get(t) === theirDefined.get(t);
  const tables = [...sums.keys()].sort();
  return {
    changed: tables.filter((t) => !same(t)),
    except: [...tables.filter(same), ...(source.views ?? [])],
    drop: [...theirs.keys()].filter((t) => !sums.has(t)).sort(),
  };
}

/**
 * Databases in backups: a consistent dump of each (`mariadb-dump
 * --single-transaction`), the resources as the API shows them, and the users' password hashes
 * (0600, for a restore). A restore puts the resources back (re-created where gone), applies
 * them, then drops and re-creates each database and loads its dump.
 */
export function databasesBackupPart(db: Db, clock: Clock, jobs: JobQueue, driver: DatabaseDriver): BackupPart {
  const apply = databaseReconciler(db, driver);

  /**
   * Where the account's dumps are made and loaded: this process's driver for the local server, or
   * the agent of the server its databases are placed on (a task whose file is this one).
   */
  async function serverOf(accountId: string, from?: PartServers) {
    const account = await findAccountById(db, accountId);
    const serverId = from?.database ?? account?.database_server_id ?? LOCAL_SERVER_ID;
    if (serverId === LOCAL_SERVER_ID)
      return {
        dump: (database: string, file: string, except?: string[]) =>
          driver.dump(database, createWriteStream(file, { mode: 0o600 }), except),
        load: (d: DatabaseSpec, file: string, partial?: PartialLoad) => driver.load(d, createReadStream(file), partial),
        checksums: async (database: string, file: string) =>
          writeFile(file, JSON.stringify(await driver.checksums(database)), { mode: 0o600 }),
        discard: (username: string) => driver.removeAccount(`${username}_`),
      };
    const maxBytes = transferLimit(account);
    return {
      dump: (database: string, file: string, except?: string[]) =>
        runAgentTask(db, clock, serverId, dumpTask(database, except), { file, maxBytes }),
      /** Dumped into `file` and, as it arrives, loaded on the server `to` (relayed): whether it loaded it all. */
      dumpLoadedOn: (d: DatabaseSpec, file: string, to: string) =>
        relayedTask(
          { db, clock },
          { serverId, spec: dumpTask(d.name), options: { file, maxBytes } },
          { serverId: to, spec: loadTask(d) },
        ),
      load: (d: DatabaseSpec, file: string, partial?: PartialLoad) =>
        runAgentTask(db, clock, serverId, loadTask(d, partial), { file }),
      checksums: (database: string, file: string) =>
        runAgentTask(db, clock, serverId, { action: 'database.checksum', database }, { file, maxBytes: CHECKSUMS_MAX_BYTES }),
      discard: (username: string) => discardCopy({ db, clock }, serverId, { action: 'database.discard', username }),
    };
  }

  /**
   * A move's databases as loaded on the target, table by table against the source's as it was
   * dumped, frozen (`CHECKSUM TABLE`). The dump is loaded after the cutover (the freeze
   * before it holds the dump alone), so a difference fails the land, which runs again, loading the
   * dump again: the account is served by the target only once its tables match. A move from a
   * backup has nothing frozen to compare with.
   */
  async function verifyLoaded(
    server: Awaited<ReturnType<typeof serverOf>>,
    databases: { name: string }[],
    staging: string,
  ): Promise<void> {
    for (const d of databases) {
      const source = checksumFile(staging, d.name);
      if (!(await exists(source))) continue;
      const loaded = `${source}.loaded`;
      await server.checksums(d.name, loaded);
      try {
        const differ = differingTables(await readChecksums(source), await readChecksums(loaded));
        if (differ.length)
          throw new Error(
            `the database ${d.name} differs on its new server after its load (CHECKSUM TABLE of ${differ.slice(0, 5).join(', ')})`,
          );
      } finally {
        await rm(loaded, { force: true });
      }
    }
  }

  /**
   * Each database's dump in `staging` loaded on the account's server, once its databases and
   * users exist there; that server is returned.
   */
  async function loadDumps(
    account: { id: string; username: string },
    databases: Pick<DatabaseSpec, 'name' | 'charset' | 'collation'>[],
    staging: string,
  ) {
    await apply({ account_id: account.id, username: account.username });
    const server = await serverOf(account.id);
    await db.withSessionLock(`database.apply:${account.id}`, async () => {
      for (const d of databases) {
        if (!(await exists(dumpFile(staging, d.name)))) continue;
        const partial = (await exists(partialFile(staging, d.name)))
          ? (JSON.parse(await readFile(partialFile(staging, d.name), 'utf8')) as PartialLoad)
          : undefined;
        await server.load(d, dumpFile(staging, d.name), partial);
      }
    });
    return server;
  }

  /**
   * A move's first copy of a database, dumped while the source serves. Between two agents the
   * target loads the dump as it arrives here (one pass, the load beside the dump); where that
   * cannot be, or the target failed or fell behind, `sendAhead` loads it from here.
   */
  async function firstDump(
    d: DatabaseSpec,
    server: Awaited<ReturnType<typeof serverOf>>,
    copy: MoveCopy,
    staging: string,
  ): Promise<void> {
    const to = sentAheadTo(copy.to, 'database');
    // Relayed between agents' tasks only: the local server dumps and loads in this process.
    const relayed = server.dumpLoadedOn;
    if (!to || !relayed) return server.dump(d.name, dumpFile(staging, d.name));
    await writeFile(aheadFile(copy.listings), '', { mode: 0o600 });
    if (await relayed(d, dumpFile(staging, d.name), to)) await writeFile(loadedFile(staging, d.name), '', { mode: 0o600 });
  }

  /**
   * A move's final copy of a database, its source frozen: its checksums (which the land verifies
   * the target's against), and a dump of what differs from the copy loaded on the target ahead
   * (`changedTables`; a whole one where that cannot be told), or none where nothing does.
   */
  async function finalDump(
    accountId: string,
    name: string,
    server: Awaited<ReturnType<typeof serverOf>>,
    copy: MoveCopy,
    staging: string,
  ): Promise<void> {
    const source = checksumFile(staging, name);
    const target = `${source}.target`;
    const to = copy.to.database;
    await Promise.all([
      server.checksums(name, source),
      to && (await serverOf(accountId, { database: to })).checksums(name, target),
    ]);
    const plan = to ? changedTables(await readChecksums(source), await readChecksums(target)) : null;
    await rm(target, { force: true });
    if (!plan) {
      await rm(partialFile(staging, name), { force: true });
      return server.dump(name, dumpFile(staging, name));
    }
    await writeFile(partialFile(staging, name), JSON.stringify({ drop: plan.drop } satisfies PartialLoad), { mode: 0o600 });
    if (plan.changed.length === 0 && plan.drop.length === 0) await rm(dumpFile(staging, name), { force: true });
    else await server.dump(name, dumpFile(staging, name), plan.except);
  }

  return {
    name: 'databases',
    role: 'database',

    async stage(accountId: string, staging: string, from?: PartServers, copy?: MoveCopy): Promise<StagedPart> {
      const databases = await repo.listOfAccount(db, 'databases', accountId);
      const server = await serverOf(accountId, from);
      const users = await repo.listOfAccount(db, 'database_users', accountId);
      await mkdir(path.join(staging, 'databases'), { recursive: true });
      // A move's first copy is loaded on the target while the source serves (`sendAhead`); its
      // final copy dumps only what changed since.
      for (const d of databases)
        if (copy?.final) await finalDump(accountId, d.name, server, copy, staging);
        else if (copy) await firstDump(d, server, copy, staging);
        else await server.dump(d.name, dumpFile(staging, d.name));
      await writeFile(
        path.join(staging, CREDENTIALS),
        JSON.stringify(Object.fromEntries(users.map((u) => [u.id, u.password_hash]))),
        {
          mode: 0o600,
        },
      );
      const manifest: DatabasesManifest = {
        databases: databases.map(toDatabase),
        database_users: await Promise.all(users.map((u) => presentUser(db, u))),
      };
      return { manifest: { ...manifest }, dirs: [], contents: { databases: databases.length, database_users: users.length } };
    },

    async restore(accountId: string, manifest: DatabasesManifest, staging: string): Promise<void> {
      const hashes = JSON.parse(await readFile(path.join(staging, CREDENTIALS), 'utf8').catch(() => '{}')) as Record<
        string,
        string
      >;
      const account = await findAccountById(db, accountId);
      if (!account) throw new Error('the account no longer exists');
      const wanted = manifest.databases ?? [];
      await db.transaction(async (tx) => {
        const ids = new Map<string, string>(); // database name → its id now
        for (const d of wanted) {
          const current = (await repo.findById(tx, 'databases', d.id)) ?? (await repo.findByName(tx, 'databases', d.name));
          if (current && current.account_id !== accountId)
            throw new RestoreRefused('already_exists', `The database ${d.name} belongs to another account now.`);
          if (current) await repo.updateDatabase(tx, current.id, undefined, d);
          else {
            await lockBelowLimit(tx, accountId, 'max_databases', (q, a) => repo.count(q, 'databases', a));
            await repo.insertDatabase(tx, {
              id: d.id,
              account_id: accountId,
              name: d.name,
              charset: d.charset,
              collation: d.collation,
            });
          }
          const row = (await repo.findById(tx, 'databases', current?.id ?? d.id)) as repo.DatabaseRow;
          ids.set(d.name, row.id);
          await databaseEvent(tx, 'database', current ? 'updated' : 'created', row, toDatabase(row));
        }
        for (const u of manifest.database_users ?? []) {
          const current =
            (await repo.findById(tx, 'database_users', u.id)) ?? (await repo.findByName(tx, 'database_users', u.username));
          if (current && current.account_id !== accountId)
            throw new RestoreRefused('already_exists', `The database user ${u.username} belongs to another account now.`);
          const fields = { password_hash: hashes[u.id] ?? current?.password_hash ?? '', status: u.status };
          if (!fields.password_hash)
            throw new RestoreRefused('credentials_missing', `The backup holds no password for ${u.username}.`);
          if (current) await repo.updateUser(tx, current.id, undefined, fields);
          else {
            await lockBelowLimit(tx, accountId, 'max_database_users', (q, a) => repo.count(q, 'database_users', a));
            await repo.insertUser(tx, { id: u.id, account_id: accountId, username: u.username, ...fields });
          }
          const userId = current?.id ?? u.id;
          // The user's grants on the restored databases become the backup's.
          for (const databaseId of ids.values()) await repo.deleteGrant(tx, databaseId, userId);
          for (const g of u.grants) {
            const databaseId = ids.get(g.database);
            if (databaseId)
              await repo.putGrant(tx, {
                account_id: accountId,
                database_id: databaseId,
                user_id: userId,
                privileges: g.privileges,
              });
          }
          const row = (await repo.findById(tx, 'database_users', userId)) as repo.UserRow;
          await databaseEvent(tx, 'database_user', current ? 'updated' : 'created', row, await presentUser(tx, row));
        }
        await databaseUnits.touch(tx, jobs, account);
      });
      await loadDumps(account, wanted, staging);
    },

    async land(accountId: string, staging: string): Promise<void> {
      const account = await findAccountById(db, accountId);
      if (!account) return;
      const databases = await repo.listOfAccount(db, 'databases', accountId);
      await verifyLoaded(await loadDumps(account, databases, staging), databases, staging);
    },

    /**
     * A move's first copy loaded on the target while the source serves (unless loaded as it was
     * dumped: `firstDump`), so that the final copy dumps only what changed since. Nothing uses it
     * there before the cutover: the account's users are made there only once it is placed there.
     */
    async sendAhead(accountId: string, staging: string, copy: MoveCopy): Promise<void> {
      if (copy.final || !copy.to.database) return;
      const target = await serverOf(accountId, { database: copy.to.database });
      await writeFile(aheadFile(copy.listings), '', { mode: 0o600 });
      for (const d of await repo.listOfAccount(db, 'databases', accountId))
        if ((await exists(dumpFile(staging, d.name))) && !(await exists(loadedFile(staging, d.name))))
          await target.load(d, dumpFile(staging, d.name));
    },

    async discardAhead(accountId: string, copy: MoveCopy): Promise<void> {
      const account = await findAccountById(db, accountId);
      if (!account || !copy.to.database || !(await exists(aheadFile(copy.listings)))) return;
      await (await serverOf(accountId, { database: copy.to.database })).discard(account.username);
    },
  };
}

/** What a server sent as its checksums, or refused as such. */
async function readChecksums(file: string): Promise<TableChecksums> {
  const value: unknown = JSON.parse(await readFile(file, 'utf8'));
  if (!Value.Check(TableChecksums, value)) throw new Error('the table checksums are not checksums');
  return value;
}
