import type { Caller } from '../../auth/caller.js';
import { requireScope } from '../../auth/caller.js';
import type { Scope, ScopeArea } from '../../auth/scopes.js';
import type { Queryable } from '../../db/client.js';
import { conflict, notFound } from '../../lib/errors.js';
import type { PageParams } from '../../db/paging.js';
import type { ServiceDeps } from '../deps.js';
import * as repo from './repo.js';

export const toOperation = (r: repo.OperationRow) => ({
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
export type Operation = ReturnType<typeof toOperation>;

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

  async function load(caller: Caller, id: string): Promise<repo.OperationRow> {
    const row = await repo.findOperation(db, caller, id);
    if (!row) throw notFound('operation');
    return row;
  }

  return {
    load,
    async get(caller: Caller, id: string): Promise<Operation> {
      return toOperation(await load(caller, id));
    },
    async list(caller: Caller, filter: Parameters<typeof repo.listOperations>[2], page: PageParams): Promise<Operation[]> {
      return (await repo.listOperations(db, caller, filter, page)).map(toOperation);
    },
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
