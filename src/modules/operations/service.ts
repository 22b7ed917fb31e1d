import { type Caller, requireScope } from '../../auth/caller.js';
import type { Scope, ScopeArea } from '../../auth/scopes.js';
import type { Queryable } from '../../db/client.js';
import { conflict } from '../../lib/errors.js';
import type { ServiceDeps } from '../deps.js';
import { resourceReads } from '../reads.js';
import * as repo from './repo.js';
import type { Operation } from './schemas.js';

export const toOperation = (r: repo.OperationRow): Operation => ({
  id: r.id,
  type: r.type,
  status: r.status,
  progress: r.progress,
  resource: { type: r.resource_type, id: r.resource_id },
  account_id: r.account_id,
  error: r.error,
  started_at: r.started_at,
  finished_at: r.finished_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

/** What canceling a queued operation of a type undoes, inside the cancel transaction. */
export interface CancelHandler {
  undo(tx: Queryable, op: repo.OperationRow): Promise<void>;
}

// The area whose write scope canceling an operation needs: the area of the resource it works on.
const AREA_OF_RESOURCE: Record<string, ScopeArea> = { site: 'sites', backup: 'backups', account: 'accounts', dns: 'dns' };

/** The scope canceling an operation needs; an unknown kind needs every scope (`*`). */
function cancelScopeOf(type: string): Scope {
  const area = AREA_OF_RESOURCE[type.split('.')[0] ?? ''];
  return area ? `${area}:write` : '*';
}

export function operationsService(deps: ServiceDeps, cancelHandlers: Map<string, CancelHandler>) {
  const { db } = deps;

  const reads = resourceReads(db, { noun: 'operation', find: repo.findOperation, list: repo.listOperations, show: toOperation });
  const { load } = reads;

  return {
    ...reads,
    /** Cancels while queued; the worker skips canceled operations. */
    async cancel(caller: Caller, id: string): Promise<Operation> {
      const current = await load(caller, id);
      // The scope first: a token that may not cancel learns nothing of the operation's state.
      requireScope(caller, cancelScopeOf(current.type));
      const handler = cancelHandlers.get(current.type);
      const row = await db.transaction(async (tx) => {
        const canceled = await repo.transition(tx, id, ['queued'], { status: 'canceled' });
        if (!canceled)
          throw conflict('invalid_state', `The operation is ${current.status}; only queued operations can be canceled.`);
        if (handler) await handler.undo(tx, canceled);
        return canceled;
      });
      return toOperation(row);
    },
  };
}
export type OperationsService = ReturnType<typeof operationsService>;
