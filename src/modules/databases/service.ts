import type { Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { PageParams } from '../../db/paging.js';
import type { JobQueue } from '../../jobs/queue.js';
import { conflict, invalid, notFound, type FieldError } from '../../lib/errors.js';
import { isId, newId } from '../../lib/ids.js';
import { checkVersion, staleVersion } from '../../lib/if-match.js';
import { generateMailPassword } from '../../lib/mail-password.js';
import { nativePasswordHash } from '../../provisioning/render/mariadb.js';
import { counterOf, lockBelowLimit, writableAccount, type AccountHooks } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import type { PlanHooks } from '../plans/index.js';
import * as repo from './repo.js';
import { databaseEvent, presentUser, toDatabase, toGrant } from './representation.js';
import { charsetErrors, defaultCollation, nameErrors, orderedPrivileges, passwordErrors, privilegeErrors } from './rules.js';
import type {
  CreateDatabase,
  CreateDatabaseUser,
  Database,
  DatabaseGrant,
  DatabaseListQuery,
  DatabasePatch,
  DatabaseUser,
  DatabaseUserWithPassword,
  UserPatch,
} from './schemas.js';
import { databaseUnits } from './unit.js';

const NOUN = { databases: 'database', database_users: 'database user' } as const;
const fail = (errors: FieldError[]) => {
  if (errors.length) throw invalid(errors);
};

/** A password given or generated (returned once), kept only as the hash MariaDB verifies. */
function passwordOf(p: { password?: string; generate_password?: boolean }, username: string, required: boolean) {
  if (p.password !== undefined && p.generate_password)
    fail([{ pointer: '/generate_password', code: 'conflicting', detail: 'give either password or generate_password' }]);
  if (required && p.password === undefined && !p.generate_password)
    fail([{ pointer: '/password', code: 'required', detail: 'give a password or generate_password: true' }]);
  const plain = p.generate_password ? generateMailPassword() : p.password;
  if (plain === undefined) return null;
  fail(passwordErrors(plain, username));
  return { plain, generated: p.generate_password === true, hash: nativePasswordHash(plain) };
}

/** Databases (`/v1/databases`), their users (`/v1/database-users`) and grants, of one account each. */
export function databasesService(deps: ServiceDeps) {
  const { db, jobs } = deps;

  async function load<T extends repo.Table>(caller: Caller, table: T, id: string) {
    const row = isId(table === 'databases' ? 'db' : 'dbu', id) ? await repo.findInReach(db, caller, table, id) : undefined;
    if (!row) throw notFound(NOUN[table]);
    return row;
  }

  /** A change of the unit, its event and its apply job in one transaction. */
  async function change<T>(account: { id: string; username: string }, work: (tx: Queryable) => Promise<T>): Promise<T> {
    return db.transaction(async (tx) => {
      const result = await work(tx);
      await databaseUnits.touch(tx, jobs, account);
      return result;
    });
  }

  const unique = (err: unknown, what: string, name: string): never => {
    if (isUniqueViolation(err, 'databases_name_key') || isUniqueViolation(err, 'database_users_username_key'))
      throw conflict('already_exists', `The ${what} ${name} already exists.`);
    throw err;
  };

  /** The database and the user of a grant: both in reach, of one account (else 404), writable. */
  async function grantPair(caller: Caller, databaseId: string, userId: string) {
    const database = await load(caller, 'databases', databaseId);
    const user = isId('dbu', userId) ? await repo.findById(db, 'database_users', userId) : undefined;
    if (!user || user.account_id !== database.account_id) throw notFound('database user');
    const account = await writableAccount(db, caller, database.account_id);
    return { database, user, account };
  }

  return {
    loadDatabase: (caller: Caller, id: string) => load(caller, 'databases', id),
    loadUser: (caller: Caller, id: string) => load(caller, 'database_users', id),

    getDatabase: async (caller: Caller, id: string): Promise<Database> => toDatabase(await load(caller, 'databases', id)),

    async listDatabases(caller: Caller, filter: DatabaseListQuery, page: PageParams): Promise<Database[]> {
      return (await repo.listInReach(db, caller, 'databases', filter, page)).map(toDatabase);
    },

    async createDatabase(caller: Caller, input: CreateDatabase): Promise<Database> {
      const account = await writableAccount(db, caller, input.account_id);
      const charset = input.charset ?? 'utf8mb4';
      const collation = input.collation ?? defaultCollation(charset);
      fail([...nameErrors(input.name, account.username, 'database', '/name'), ...charsetErrors(charset, collation)]);
      const id = newId('db');
      try {
        const row = await change(account, async (tx) => {
          await lockBelowLimit(tx, account.id, 'max_databases', (q, a) => repo.count(q, 'databases', a));
          await repo.insertDatabase(tx, { id, account_id: account.id, name: input.name, charset, collation });
          const created = (await repo.findById(tx, 'databases', id)) as repo.DatabaseRow;
          await databaseEvent(tx, 'database', 'created', created, toDatabase(created));
          return created;
        });
        return toDatabase(row);
      } catch (err) {
        return unique(err, 'database', input.name);
      }
    },

    /** PUT and PATCH: the character set and collation (a database cannot be renamed in MariaDB). */
    async updateDatabase(caller: Caller, id: string, patch: DatabasePatch, expectedVersion?: number): Promise<Database> {
      const current = await load(caller, 'databases', id);
      const account = await writableAccount(db, caller, current.account_id);
      checkVersion(expectedVersion, current.version);
      const charset = patch.charset ?? current.charset;
      // A new charset without a collation takes that charset's default.
      const collation =
        patch.collation ?? (patch.charset && patch.charset !== current.charset ? defaultCollation(charset) : current.collation);
      fail(charsetErrors(charset, collation));
      const row = await change(account, async (tx) => {
        if (!(await repo.updateDatabase(tx, id, current.version, { charset, collation }))) throw staleVersion();
        const updated = (await repo.findById(tx, 'databases', id)) as repo.DatabaseRow;
        await databaseEvent(tx, 'database', 'updated', updated, toDatabase(updated));
        return updated;
      });
      return toDatabase(row);
    },

    /** Drops the database and every row in it once applied; its grants go with it. */
    async removeDatabase(caller: Caller, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, 'databases', id);
      const account = await writableAccount(db, caller, current.account_id);
      checkVersion(expectedVersion, current.version);
      await change(account, async (tx) => {
        await repo.remove(tx, 'databases', id);
        await databaseEvent(tx, 'database', 'deleted', current, toDatabase(current));
      });
    },

    getUser: async (caller: Caller, id: string): Promise<DatabaseUser> =>
      presentUser(db, await load(caller, 'database_users', id)),

    async listUsers(caller: Caller, filter: DatabaseListQuery, page: PageParams): Promise<DatabaseUser[]> {
      const rows = await repo.listInReach(db, caller, 'database_users', filter, page);
      return Promise.all(rows.map((r) => presentUser(db, r)));
    },

    /** 201; a generated password is in this response only. */
    async createUser(caller: Caller, input: CreateDatabaseUser): Promise<DatabaseUserWithPassword> {
      const account = await writableAccount(db, caller, input.account_id);
      fail(nameErrors(input.username, account.username, 'user', '/username'));
      const secret = passwordOf(input, input.username, true) as NonNullable<ReturnType<typeof passwordOf>>;
      const id = newId('dbu');
      try {
        const user = await change(account, async (tx) => {
          await lockBelowLimit(tx, account.id, 'max_database_users', (q, a) => repo.count(q, 'database_users', a));
          await repo.insertUser(tx, {
            id,
            account_id: account.id,
            username: input.username,
            password_hash: secret.hash,
            status: 'active',
          });
          const created = (await repo.findById(tx, 'database_users', id)) as repo.UserRow;
          const data = await presentUser(tx, created);
          await databaseEvent(tx, 'database_user', 'created', created, data);
          return data;
        });
        return secret.generated ? { ...user, password: secret.plain } : user;
      } catch (err) {
        return unique(err, 'database user', input.username);
      }
    },

    /** PUT and PATCH: a new password (counts at the next apply; old sessions stay), or status. */
    async updateUser(caller: Caller, id: string, patch: UserPatch, expectedVersion?: number): Promise<DatabaseUserWithPassword> {
      const current = await load(caller, 'database_users', id);
      const account = await writableAccount(db, caller, current.account_id);
      checkVersion(expectedVersion, current.version);
      const secret = passwordOf(patch, current.username, false);
      const user = await change(account, async (tx) => {
        const fields = { password_hash: secret?.hash ?? current.password_hash, status: patch.status ?? current.status };
        if (!(await repo.updateUser(tx, id, current.version, fields))) throw staleVersion();
        const updated = (await repo.findById(tx, 'database_users', id)) as repo.UserRow;
        const data = await presentUser(tx, updated);
        await databaseEvent(tx, 'database_user', 'updated', updated, data);
        return data;
      });
      return secret?.generated ? { ...user, password: secret.plain } : user;
    },

    async removeUser(caller: Caller, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, 'database_users', id);
      const account = await writableAccount(db, caller, current.account_id);
      checkVersion(expectedVersion, current.version);
      const data = await presentUser(db, current);
      await change(account, async (tx) => {
        await repo.remove(tx, 'database_users', id);
        await databaseEvent(tx, 'database_user', 'deleted', current, data);
      });
    },

    async listGrants(caller: Caller, databaseId: string, page: PageParams): Promise<DatabaseGrant[]> {
      const database = await load(caller, 'databases', databaseId);
      return (await repo.listGrants(db, { database_id: database.id }, page)).map(toGrant);
    },

    async getGrant(caller: Caller, databaseId: string, userId: string): Promise<DatabaseGrant> {
      const database = await load(caller, 'databases', databaseId);
      const grant = (await repo.listGrants(db, { database_id: database.id })).find((g) => g.user_id === userId);
      if (!grant) throw notFound('grant');
      return toGrant(grant);
    },

    /** Sets the user's privileges on the database exactly (201 when new); announced as `database_user.updated`. */
    async putGrant(
      caller: Caller,
      databaseId: string,
      userId: string,
      privileges: string[],
      expectedVersion?: number,
    ): Promise<{ grant: DatabaseGrant; created: boolean }> {
      fail(privilegeErrors(privileges));
      const { database, user, account } = await grantPair(caller, databaseId, userId);
      return change(account, async (tx) => {
        // If-Match names the grant as it is: one that does not exist yet matches no ETag.
        checkVersion(expectedVersion, (await grantOf(tx, database.id, user.id))?.version ?? 0);
        const created = await repo.putGrant(tx, {
          account_id: account.id,
          database_id: database.id,
          user_id: user.id,
          privileges: orderedPrivileges(privileges),
        });
        await userChanged(tx, user.id);
        return { grant: toGrant((await grantOf(tx, database.id, user.id)) as repo.GrantRow), created };
      });
    },

    /** Revokes every privilege of the user on the database. */
    async removeGrant(caller: Caller, databaseId: string, userId: string, expectedVersion?: number): Promise<void> {
      const { database, user, account } = await grantPair(caller, databaseId, userId);
      await change(account, async (tx) => {
        const current = await grantOf(tx, database.id, user.id);
        if (!current) throw notFound('grant');
        checkVersion(expectedVersion, current.version);
        await repo.deleteGrant(tx, database.id, user.id);
        await userChanged(tx, user.id);
      });
    },
  };

  /**
   * The user's grant on the database as it stands. Its user's row is locked first, so two changes
   * of the user's grants (each checking If-Match against this) take turns.
   */
  async function grantOf(tx: Queryable, databaseId: string, userId: string): Promise<repo.GrantRow | undefined> {
    await repo.findById(tx, 'database_users', userId, true);
    return (await repo.listGrants(tx, { user_id: userId })).find((g) => g.database_id === databaseId);
  }

  /** A grant is part of its user: the user's version moves on and `database_user.updated` says so. */
  async function userChanged(tx: Queryable, userId: string): Promise<void> {
    await tx.query('UPDATE database_users SET version = version + 1, updated_at = now() WHERE id = $1', [userId]);
    const row = (await repo.findById(tx, 'database_users', userId)) as repo.UserRow;
    await databaseEvent(tx, 'database_user', 'updated', row, await presentUser(tx, row));
  }
}
export type DatabasesService = ReturnType<typeof databasesService>;

/**
 * Databases and their users count against the account's usage, limits and disk; suspension
 * locks the users; termination drops everything with the account's prefix.
 */
export const databaseAccountHooks = (jobs: JobQueue): Partial<AccountHooks> => ({
  counters: [counterOf('databases', repo.counts.databases), counterOf('database_users', repo.counts.database_users)],
  statusChanged: [(tx, accountId) => databaseUnits.touchExisting(tx, jobs, accountId)],
  // Each user's MAX_USER_CONNECTIONS is the account's `max_database_connections`.
  limitsChanged: [
    async (tx, accountId, before, after) => {
      if (before.max_database_connections !== after.max_database_connections)
        await databaseUnits.touchExisting(tx, jobs, accountId);
    },
  ],
  // The unit goes with the account (cascade); the job, finding none, drops everything with the prefix.
  terminating: [(tx, accountId) => databaseUnits.touchExisting(tx, jobs, accountId)],
});

/** A plan's `max_database_connections` changed: its accounts' users get the new limit. */
export const databasePlanHooks = (jobs: JobQueue): PlanHooks => ({
  changed: [
    async (tx, planId, before, after) => {
      if (before.max_database_connections !== after.max_database_connections)
        await databaseUnits.touchOnPlan(tx, jobs, planId, 'max_database_connections');
    },
  ],
});
