import { type Caller, requireKind, requireWritable } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import { conflict, forbidden } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion, staleVersion } from '../../lib/if-match.js';
import { mergeFields } from '../../lib/merge-patch.js';
import type { ServiceDeps } from '../deps.js';
import { resourceReads } from '../reads.js';
import * as repo from './repo.js';
import { LIMIT_FIELDS, type CreatePlan, type Limits, type Plan, type PlanPatch } from './schemas.js';

const toPlan = (r: repo.PlanRow): Plan => ({
  id: r.id,
  reseller_id: r.reseller_id,
  name: r.name,
  description: r.description,
  ...(Object.fromEntries(LIMIT_FIELDS.map((k) => [k, r[k]])) as Limits),
  ssh_access: r.ssh_access,
  features: r.features,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

const fieldsOf = (r: repo.PlanRow): repo.PlanFields => ({
  name: r.name,
  description: r.description,
  features: r.features,
  ssh_access: r.ssh_access,
  ...(Object.fromEntries(LIMIT_FIELDS.map((k) => [k, r[k]])) as Limits),
});

// Fields a plan may leave out when it is created (the migrations gave existing plans the same defaults).
const DEFAULT_DATABASES = 10;
const DEFAULT_DATABASE_CONNECTIONS = 20;
const DEFAULT_PHP_WORKERS = 5;
const DEFAULT_CRON_JOBS = 10;
const DEFAULT_CRON_INTERVAL_MINUTES = 5;
const DEFAULT_SSH_KEYS = 10;

const duplicateName = () => conflict('already_exists', 'A plan with this name already exists.');

/** What other modules do when a plan changes, in the change's transaction (SSH access re-rendered under a new `ssh_access`). */
export interface PlanHooks {
  changed: ((tx: Queryable, planId: string, before: repo.PlanFields, after: repo.PlanFields) => Promise<void>)[];
}

export function plansService(deps: ServiceDeps, hooks: PlanHooks = { changed: [] }) {
  const { db } = deps;

  const reads = resourceReads(db, { noun: 'plan', find: repo.findPlan, list: repo.listPlans, show: toPlan });
  const { load } = reads;

  /** Operators change any plan, resellers only their own; global plans are read-only to them. */
  function requireOwner(caller: Caller, plan: repo.PlanRow): void {
    requireKind(caller, ['operator', 'reseller'], 'change plans');
    requireWritable(caller);
    if (caller.principal.kind === 'reseller' && plan.reseller_id !== caller.principal.id) {
      throw forbidden('Global plans can be changed by the operator only.');
    }
  }

  return {
    ...reads,

    async create(caller: Caller, input: CreatePlan): Promise<Plan> {
      requireKind(caller, ['operator', 'reseller'], 'create plans');
      requireWritable(caller);
      const resellerId = caller.principal.kind === 'reseller' ? caller.principal.id : null;
      try {
        const row = await repo.insertPlan(db, newId('pln'), resellerId, {
          ...input,
          max_databases: input.max_databases ?? DEFAULT_DATABASES,
          max_database_users: input.max_database_users ?? DEFAULT_DATABASES,
          max_database_connections: input.max_database_connections ?? DEFAULT_DATABASE_CONNECTIONS,
          php_workers: input.php_workers ?? DEFAULT_PHP_WORKERS,
          max_cron_jobs: input.max_cron_jobs ?? DEFAULT_CRON_JOBS,
          cron_min_interval_minutes: input.cron_min_interval_minutes ?? DEFAULT_CRON_INTERVAL_MINUTES,
          max_ssh_keys: input.max_ssh_keys ?? DEFAULT_SSH_KEYS,
          ssh_access: input.ssh_access ?? 'sftp',
          description: input.description ?? '',
          features: input.features ?? [],
        });
        return toPlan(row);
      } catch (err) {
        if (isUniqueViolation(err, 'plans_owner_name_key')) throw duplicateName();
        throw err;
      }
    },

    async update(caller: Caller, id: string, patch: PlanPatch, expectedVersion?: number): Promise<Plan> {
      const current = await load(caller, id);
      requireOwner(caller, current);
      checkVersion(expectedVersion, current.version);
      try {
        const row = await db.transaction(async (tx) => {
          const updated = await repo.updatePlan(tx, id, current.version, mergeFields(fieldsOf(current), patch));
          if (!updated) throw staleVersion();
          for (const changed of hooks.changed) await changed(tx, id, fieldsOf(current), fieldsOf(updated));
          return updated;
        });
        return toPlan(row);
      } catch (err) {
        if (isUniqueViolation(err, 'plans_owner_name_key')) throw duplicateName();
        throw err;
      }
    },

    async remove(caller: Caller, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, id);
      requireOwner(caller, current);
      checkVersion(expectedVersion, current.version);
      try {
        await repo.deletePlan(db, id);
      } catch (err) {
        if (isForeignKeyViolation(err)) throw conflict('in_use', 'Hosting accounts still use this plan.');
        throw err;
      }
    },
  };
}
export type PlansService = ReturnType<typeof plansService>;
