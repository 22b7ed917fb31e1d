import { type Caller, requireKind, requireWritable } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { PageParams } from '../../db/paging.js';
import { JOBS } from '../../jobs/names.js';
import { accountHome } from '../../layout.js';
import { conflict, forbidden, invalid, notFound, quotaExceeded } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion, staleVersion } from '../../lib/if-match.js';
import { mergeFields } from '../../lib/merge-patch.js';
import { removeTree } from '../../lib/remove-tree.js';
import type { ServiceDeps } from '../deps.js';
import * as ops from '../operations/index.js';
import { toOperation, type CancelHandler } from '../operations/index.js';
import * as plans from '../plans/index.js';
import { publishEvent } from '../publishing/index.js';
import { lockResellerAccountCount } from '../resellers/index.js';
import { notMoving } from './moving.js';
import { placeAccount, withdrawFromServers } from './placement.js';
import * as repo from './repo.js';
import type { Account, AccountFields, AccountListQuery, AccountStatus, CreateAccount, Usage, UsageListQuery } from './schemas.js';
import { exceededLimits, measureUsage, type RecordedBytes, type ResourceCounter } from './usage.js';

/** Accounts the usage meter measures and records together: a statement per figure for all of them. */
const METERED_AT_ONCE = 250;

export const limitsOf = (r: repo.AccountRow): plans.Limits => repo.planLimitsOf(r, r.limit_overrides);

/**
 * The most of an account another server may send back for its backup (packed files, a dump):
 * twice its disk quota, so that no server fills the control plane's disk.
 */
export const transferLimit = (r: repo.AccountRow | undefined): number => 2 * (r ? limitsOf(r).disk_quota_mb : 0) * 2 ** 20;

/** Whether the account's plan includes a feature (`ssl`, `php`, `backups`). */
export const hasFeature = (r: repo.AccountRow, feature: string): boolean => r.plan_features.includes(feature);

/** The account in the caller's reach, else a 404 that does not say whether it exists. */
export async function reachableAccount(db: Queryable, caller: Caller, accountId: string): Promise<repo.AccountRow> {
  const account = await repo.findAccount(db, caller, accountId);
  if (!account) throw notFound('account');
  return account;
}

/**
 * The account a new resource goes to: in the caller's reach (else 404), writable by the caller
 * (403 `account_suspended` for its own principal), and not being terminated (409).
 */
export async function writableAccount(db: Queryable, caller: Caller, accountId: string): Promise<repo.AccountRow> {
  const account = await reachableAccount(db, caller, accountId);
  requireWritable(caller, account);
  if (account.status === 'terminating') throw conflict('invalid_state', 'The account is being terminated.');
  return account;
}

/**
 * Locks the account row inside the caller's transaction, which serialises concurrent creations,
 * and refuses one more resource once `count` has reached the account's `limit` (403).
 */
export async function lockBelowLimit(
  tx: Queryable,
  accountId: string,
  limit:
    | 'max_domains'
    | 'max_email_accounts'
    | 'max_sites'
    | 'max_backups'
    | 'max_databases'
    | 'max_database_users'
    | 'max_cron_jobs'
    | 'max_ssh_keys',
  count: (tx: Queryable, accountId: string) => Promise<number>,
): Promise<repo.AccountRow> {
  const locked = (await repo.findAccountById(tx, accountId, true)) as repo.AccountRow;
  const allowed = limitsOf(locked)[limit];
  const usage = await count(tx, accountId);
  if (usage >= allowed) throw quotaExceeded([{ limit, allowed, usage }]);
  return locked;
}

export const toAccount = (r: repo.AccountRow, usage?: Usage): Account => ({
  id: r.id,
  username: r.username,
  display_name: r.display_name,
  contact_email: r.contact_email,
  plan_id: r.plan_id,
  reseller_id: r.reseller_id,
  status: r.status,
  suspension: r.suspended_at ? { reason: r.suspension_reason ?? '', suspended_at: r.suspended_at } : null,
  limits: limitsOf(r),
  limit_overrides: r.limit_overrides,
  placement: { web: r.web_server_id, mail: r.mail_server_id, database: r.database_server_id },
  usage,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

const accountEvent = (tx: Queryable, type: string, row: repo.AccountRow) =>
  publishEvent(tx, {
    type,
    accountId: row.id,
    resellerId: row.reseller_id,
    resource: { type: 'account', id: row.id, version: row.version },
    data: toAccount(row),
  });

/**
 * What the modules built on accounts contribute to an account's life; registered by each of them
 * (app.ts hands them in), so accounts imports none of them.
 */
export interface AccountHooks {
  /** Counts of the account's resources, for its usage. */
  counters: ResourceCounter[];
  /** In the transaction of a suspension or unsuspension: what renders differently now. */
  statusChanged: ((tx: Queryable, accountId: string) => Promise<void>)[];
  /** In the transaction that moves the account to another plan: what renders differently under it. */
  planChanged: ((tx: Queryable, accountId: string) => Promise<void>)[];
  /** In the transaction that changes the account's effective limits (another plan, or its overrides): what renders them. */
  limitsChanged: ((tx: Queryable, accountId: string, before: plans.Limits, after: plans.Limits) => Promise<void>)[];
  /** In the termination's transaction, before the row goes (its resources go with it by cascade). */
  terminating: ((tx: Queryable, accountId: string) => Promise<void>)[];
  /** Before that transaction: what lives outside the account's home (backup archives). */
  removals: ((accountId: string) => Promise<void>)[];
  /** Bytes the account stores outside its home that count against its disk quota (databases, other servers). */
  diskBytes: RecordedBytes[];
}

/** Every module's hooks in one (their order is the order given). */
export const mergeAccountHooks = (parts: Partial<AccountHooks>[]): AccountHooks => ({
  counters: parts.flatMap((p) => p.counters ?? []),
  statusChanged: parts.flatMap((p) => p.statusChanged ?? []),
  planChanged: parts.flatMap((p) => p.planChanged ?? []),
  limitsChanged: parts.flatMap((p) => p.limitsChanged ?? []),
  terminating: parts.flatMap((p) => p.terminating ?? []),
  removals: parts.flatMap((p) => p.removals ?? []),
  diskBytes: parts.flatMap((p) => p.diskBytes ?? []),
});

export function accountsService(deps: ServiceDeps, hooks: Partial<AccountHooks> = {}) {
  const {
    counters = [],
    statusChanged = [],
    planChanged = [],
    limitsChanged = [],
    terminating = [],
    removals = [],
    diskBytes = [],
  } = hooks;
  const { db, config } = deps;

  async function load(caller: Caller, id: string): Promise<repo.AccountRow> {
    const row = await repo.findAccount(db, caller, id);
    if (!row) throw notFound('account');
    return row;
  }

  const usageOf = async (id: string) => (await measureUsage(db, config.dataDir, [id], counters, diskBytes)).get(id) as Usage;

  /** The plan must be visible to the caller and belong to the account's reseller (or be global). */
  async function usablePlan(caller: Caller, planId: string, resellerId: string | null, pointer: string): Promise<plans.Limits> {
    const plan = await plans.findPlan(db, caller, planId);
    if (!plan || (plan.reseller_id !== null && plan.reseller_id !== resellerId)) {
      throw invalid([{ pointer, code: 'unknown_plan', detail: 'is not a plan this account can use' }]);
    }
    return plan;
  }

  /** Reloads inside a transaction with a row lock, then writes the change and its event. */
  async function changeStatus(
    caller: Caller,
    id: string,
    to: { status: AccountStatus; reason?: string | null; suspendedAt?: string | null },
    event: string,
  ): Promise<Account> {
    const current = await load(caller, id);
    requireKind(caller, ['operator', 'reseller'], `${event.split('.')[1]} accounts`);
    requireWritable(caller);
    if (current.status === 'terminating') throw conflict('invalid_state', 'The account is being terminated.');
    if (current.status === to.status) return toAccount(current);
    const row = await db.transaction(async (tx) => {
      if (!(await repo.setStatus(tx, id, [current.status], to))) throw staleVersion();
      const updated = (await repo.findAccountById(tx, id)) as repo.AccountRow;
      await accountEvent(tx, event, updated);
      // A suspended account's mailboxes refuse logins and its sites answer 503: they render again.
      for (const changed of statusChanged) await changed(tx, id);
      return updated;
    });
    return toAccount(row);
  }

  return {
    load,
    async get(caller: Caller, id: string): Promise<Account> {
      const row = await load(caller, id);
      return toAccount(row, await usageOf(row.id));
    },

    /** A page of the reachable accounts' usage as last measured. */
    async listUsage(caller: Caller, filter: UsageListQuery, page: PageParams) {
      return (await repo.listUsage(db, caller, filter, page)).map((r) => ({
        ...r,
        usage: r.usage as Usage | null,
        measured_at: r.measured_at && new Date(r.measured_at).toISOString(),
        updated_at: r.updated_at && new Date(r.updated_at).toISOString(),
      }));
    },

    /**
     * Every account's usage measured and recorded, METERED_AT_ONCE accounts at a time (the
     * meter's tick); an account another process measured within half a period is left to that
     * measurement.
     */
    async meterAll(): Promise<void> {
      const fresh = new Date(deps.clock.now().getTime() - config.usageMeterMs / 2);
      const ids = await repo.unmeasuredSince(db, fresh);
      for (let i = 0; i < ids.length; i += METERED_AT_ONCE) {
        const usages = await measureUsage(db, config.dataDir, ids.slice(i, i + METERED_AT_ONCE), counters, diskBytes);
        await repo.recordUsages(db, usages, deps.clock.now());
      }
    },

    async usage(caller: Caller, id: string) {
      const row = await load(caller, id);
      const usage = await usageOf(row.id);
      return { account_id: row.id, limits: limitsOf(row), usage, exceeded: exceededLimits(limitsOf(row), usage) };
    },

    async list(caller: Caller, filter: AccountListQuery, page: PageParams): Promise<Account[]> {
      return (await repo.listAccounts(db, caller, filter, page)).map((r) => toAccount(r));
    },

    async create(caller: Caller, input: CreateAccount): Promise<Account> {
      requireKind(caller, ['operator', 'reseller'], 'create accounts');
      requireWritable(caller);
      if (caller.accountIds) throw forbidden('A token narrowed to some accounts cannot create accounts.');
      if (input.reseller_id && caller.principal.kind !== 'operator') {
        throw invalid([{ pointer: '/reseller_id', code: 'not_allowed', detail: 'is set from the caller' }]);
      }
      const resellerId = caller.principal.kind === 'reseller' ? caller.principal.id : (input.reseller_id ?? null);
      await usablePlan(caller, input.plan_id, resellerId, '/plan_id');
      const id = newId('acc');
      try {
        const row = await db.transaction(async (tx) => {
          if (resellerId) {
            const count = await lockResellerAccountCount(tx, resellerId);
            if (!count) throw invalid([{ pointer: '/reseller_id', code: 'unknown_reseller', detail: 'is not a reseller' }]);
            if (count.max_accounts !== null && count.count >= count.max_accounts) {
              throw quotaExceeded([{ limit: 'max_accounts', allowed: count.max_accounts, usage: count.count }]);
            }
          }
          const placement = await placeAccount(tx, caller, input.placement, { now: deps.clock.now(), dataDir: config.dataDir });
          await repo.insertAccount(tx, {
            id,
            placement,
            username: input.username,
            reseller_id: resellerId,
            display_name: input.display_name ?? input.username,
            contact_email: input.contact_email,
            plan_id: input.plan_id,
            limit_overrides: input.limit_overrides ?? {},
          });
          const created = (await repo.findAccountById(tx, id)) as repo.AccountRow;
          await accountEvent(tx, 'account.created', created);
          return created;
        });
        return toAccount(row, await usageOf(id));
      } catch (err) {
        if (isUniqueViolation(err, 'accounts_username_key'))
          throw conflict('already_exists', `The username ${input.username} is taken.`);
        throw err;
      }
    },

    async update(caller: Caller, id: string, patch: Partial<AccountFields>, expectedVersion?: number): Promise<Account> {
      const current = await load(caller, id);
      requireWritable(caller, current);
      checkVersion(expectedVersion, current.version);
      if (current.status === 'terminating') throw conflict('invalid_state', 'The account is being terminated.');
      if (caller.principal.kind === 'account' && (patch.plan_id !== undefined || patch.limit_overrides !== undefined)) {
        throw forbidden('An account cannot change its own plan or limits.');
      }
      const next = mergeFields<AccountFields>(
        {
          display_name: current.display_name,
          contact_email: current.contact_email,
          plan_id: current.plan_id,
          limit_overrides: current.limit_overrides,
        },
        patch,
      );
      next.limit_overrides ??= {};
      const planLimits =
        next.plan_id === current.plan_id
          ? repo.planLimitsOf(current)
          : await usablePlan(caller, next.plan_id, current.reseller_id, '/plan_id');
      const usage = await usageOf(id);
      const limits = { ...planLimits, ...next.limit_overrides };
      const exceeded = exceededLimits(limits, usage);
      const wasExceeded = new Set(exceededLimits(limitsOf(current), usage).map((e) => e.limit));
      // Only a change that lowers a limit below current usage is refused; unrelated edits pass.
      if (exceeded.some((e) => !wasExceeded.has(e.limit)))
        throw quotaExceeded(exceeded, 'The current usage exceeds the new limits.');
      const row = await db.transaction(async (tx) => {
        if (!(await repo.updateAccount(tx, id, current.version, next))) throw staleVersion();
        // The limits' hooks (sites, databases) before the plan's (SSH): the units locked in the order
        // a plan's own change and a suspension lock them (app.ts).
        for (const changed of limitsChanged) await changed(tx, id, limitsOf(current), limits);
        if (next.plan_id !== current.plan_id) for (const changed of planChanged) await changed(tx, id);
        const updated = (await repo.findAccountById(tx, id)) as repo.AccountRow;
        await accountEvent(tx, 'account.updated', updated);
        return updated;
      });
      return toAccount(row, usage);
    },

    suspend: (caller: Caller, id: string, reason: string) =>
      changeStatus(caller, id, { status: 'suspended', reason, suspendedAt: deps.clock.now().toISOString() }, 'account.suspended'),

    unsuspend: (caller: Caller, id: string) => changeStatus(caller, id, { status: 'active' }, 'account.unsuspended'),

    /** DELETE: 202 terminating, removal runs as a job; a repeated DELETE shares the operation. */
    async terminate(caller: Caller, id: string, expectedVersion?: number) {
      const current = await load(caller, id);
      requireKind(caller, ['operator', 'reseller'], 'terminate accounts');
      requireWritable(caller);
      checkVersion(expectedVersion, current.version);
      const { row, op } = await db.transaction(async (tx) => {
        const locked = (await repo.findAccountById(tx, id, true)) as repo.AccountRow;
        notMoving(locked);
        if (locked.status !== 'terminating')
          await repo.setStatus(tx, id, [locked.status], {
            status: 'terminating',
            reason: locked.suspension_reason,
            suspendedAt: locked.suspended_at,
          });
        const started = await ops.startOperation(tx, {
          type: 'account.terminate',
          resourceType: 'account',
          resourceId: id,
          accountId: id,
          resellerId: locked.reseller_id,
        });
        if (started.created) await deps.jobs.send(tx, JOBS.accountTerminate, { operation_id: started.row.id });
        return { row: (await repo.findAccountById(tx, id)) as repo.AccountRow, op: started.row };
      });
      return { ...toAccount(row), operation: toOperation(op) };
    },

    /** The job: removes the account's files, then the account (its tokens go with it). */
    async runTermination(operationId: string): Promise<void> {
      const op = await ops.findOperationById(db, operationId);
      if (!op || !['queued', 'running'].includes(op.status)) return;
      await ops.transition(db, op.id, ['queued', 'running'], { status: 'running', progress: 10 });
      // The account's files (mailboxes and site releases included) and its backup archives go
      // now; its zones, mail maps and server blocks below.
      await removeTree(accountHome(config.dataDir, op.resource_id));
      for (const remove of removals) await remove(op.resource_id);
      await db.transaction(async (tx) => {
        const account = await repo.findAccountById(tx, op.resource_id, true);
        if (account) {
          // Its zones, mail domains and sites go with the row (foreign keys); the hooks queue the
          // applies that then find them gone and withdraw them from the daemons.
          for (const hook of terminating) await hook(tx, account.id);
          await withdrawFromServers(tx, account);
          await accountEvent(tx, 'account.deleted', account);
          await repo.deleteAccount(tx, account.id);
        }
        await ops.transition(tx, op.id, ['running'], { status: 'succeeded', progress: 100, error: null });
      });
      deps.resolver.clear();
    },
  };
}
export type AccountsService = ReturnType<typeof accountsService>;

/** Canceling a queued termination gives the account back its previous status. */
export const cancelTermination: CancelHandler = {
  async undo(tx, op) {
    const account = await repo.findAccountById(tx, op.resource_id, true);
    if (!account) return;
    await repo.setStatus(tx, account.id, ['terminating'], {
      status: account.suspended_at ? 'suspended' : 'active',
      reason: account.suspension_reason,
      suspendedAt: account.suspended_at,
    });
  },
};
