import { type BackupPart, type Contribution, type LocalShare, operationWorker } from '../../contribution.js';
import { JOBS } from '../../jobs/names.js';
import type { AccountMoves } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import type { ServerRecords } from '../domains/index.js';
import { moveRoutes } from './routes.js';
import { moveRunner } from './runner.js';
import { moveSchemas } from './schemas.js';
import { movesService } from './service.js';

/**
 * Moves of accounts between servers. What a move copies is each module's backup part
 * (`parts`: files, maildirs, dumps, taken from the source and put on the target); the records it
 * points elsewhere are the domains module's (`records`); what the local server held of it, each
 * module's `localShares`; the account row's hold, freeze and placement are the accounts module's
 * (`accounts`).
 */
export function movesModule(
  svc: ServiceDeps,
  o: { accounts: AccountMoves; parts: readonly BackupPart[]; localShares: readonly LocalShare[]; records: ServerRecords },
): Contribution {
  return {
    schemas: moveSchemas,
    routes: (app) => moveRoutes(app, movesService(svc, o.accounts)),
    workers: [operationWorker(JOBS.accountMove, moveRunner(svc, o))],
  };
}
