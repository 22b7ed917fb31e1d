import { type Contribution, operationWorker } from '../../contribution.js';
import { JOBS } from '../../jobs/names.js';
import { periodic } from '../../jobs/periodic.js';
import type { ServiceDeps } from '../deps.js';
import type { CancelHandler } from '../operations/index.js';
import { accountMoves } from './moving.js';
import { accountRoutes } from './routes.js';
import { accountSchemas } from './schemas.js';
import { accountsService, cancelTermination, mergeAccountHooks, type AccountHooks } from './service.js';

/** Accounts, with what every module built on them contributes to their life (AccountHooks). */
export function accountsModule(svc: ServiceDeps, hooks: Partial<AccountHooks>[], onError: (err: unknown) => void) {
  const merged = mergeAccountHooks(hooks);
  const accounts = accountsService(svc, merged);
  const contribution: Contribution = {
    schemas: accountSchemas,
    routes: (app) => accountRoutes(app, accounts),
    workers: [operationWorker(JOBS.accountTerminate, accounts.runTermination)],
    loops: [periodic(() => accounts.meterAll(), svc.config.usageMeterMs, onError)],
  };
  const cancelHandlers: [string, CancelHandler][] = [['account.terminate', cancelTermination]];
  return { contribution, cancelHandlers, moves: accountMoves(merged.statusChanged) };
}
