import { type Caller, requireKind } from '../../auth/caller.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import { conflict } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion, staleVersion } from '../../lib/if-match.js';
import { mergeFields } from '../../lib/merge-patch.js';
import type { ServiceDeps } from '../deps.js';
import { resourceReads } from '../reads.js';
import * as repo from './repo.js';
import type { CreateReseller, Reseller, ResellerFields } from './schemas.js';

const toReseller = (r: repo.ResellerRow): Reseller => ({
  id: r.id,
  name: r.name,
  contact_email: r.contact_email,
  status: r.status,
  max_accounts: r.max_accounts,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

const fieldsOf = (r: repo.ResellerRow): ResellerFields => ({
  name: r.name,
  contact_email: r.contact_email,
  status: r.status,
  max_accounts: r.max_accounts,
});

export function resellersService(deps: ServiceDeps) {
  const { db } = deps;

  const reads = resourceReads(db, { noun: 'reseller', find: repo.findReseller, list: repo.listResellers, show: toReseller });
  const { load } = reads;

  return {
    ...reads,

    async create(caller: Caller, input: CreateReseller): Promise<Reseller> {
      requireKind(caller, ['operator'], 'create resellers');
      const row = await repo.insertReseller(db, newId('rsl'), {
        name: input.name,
        contact_email: input.contact_email,
        status: input.status ?? 'active',
        max_accounts: input.max_accounts ?? null,
      });
      return toReseller(row);
    },

    async update(caller: Caller, id: string, patch: Partial<ResellerFields>, expectedVersion?: number): Promise<Reseller> {
      const current = await load(caller, id);
      requireKind(caller, ['operator'], 'change resellers');
      checkVersion(expectedVersion, current.version);
      const next = mergeFields(fieldsOf(current), patch);
      const row = await repo.updateReseller(db, id, current.version, next);
      if (!row) throw staleVersion();
      // A suspension changes what every token of the reseller may do: drop cached callers.
      if (next.status !== current.status) deps.resolver.clear();
      return toReseller(row);
    },

    async remove(caller: Caller, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, id);
      requireKind(caller, ['operator'], 'delete resellers');
      checkVersion(expectedVersion, current.version);
      try {
        await repo.deleteReseller(db, id);
      } catch (err) {
        if (isForeignKeyViolation(err)) throw conflict('in_use', 'The reseller still has hosting accounts.');
        throw err;
      }
      deps.resolver.clear();
    },
  };
}
export type ResellersService = ReturnType<typeof resellersService>;
