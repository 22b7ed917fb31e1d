import { type BackupPart, type Contribution, type AccountShare, operationWorker } from '../../contribution.js';
import type { Queryable } from '../../db/client.js';
import { JOBS } from '../../jobs/names.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { AccountMoves } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import type { ServerRecords } from '../domains/index.js';
import { type DrainingServers, drainer } from './drain.js';
import { sendMoveJob } from './job.js';
import { forwardingTo } from './repo.js';
import { moveRoutes } from './routes.js';
import { forwardingEnds, moveRunner } from './runner.js';
import { moveSchemas } from './schemas.js';
import { type BackupCopies, movesService } from './service.js';

/**
 * Moves of accounts between servers. What a move copies is each module's backup part
 * (`parts`: files, maildirs, dumps, taken from the source and put on the target); the records it
 * points elsewhere are the domains module's (`records`); what the local server held of it, each
 * module's `shares`; the account row's hold, freeze and placement are the accounts module's
 * (`accounts`). Draining servers (the servers module's `servers`) get their accounts moved away.
 */
export function movesModule(
  svc: ServiceDeps,
  o: {
    accounts: AccountMoves;
    parts: readonly BackupPart[];
    shares: readonly AccountShare[];
    records: ServerRecords;
    servers: DrainingServers;
    backups: BackupCopies;
  },
  onError: (err: unknown) => void,
): Contribution {
  const moves = movesService(svc, o.accounts, o.backups);
  return {
    schemas: moveSchemas,
    routes: (app) => moveRoutes(app, moves),
    // BERTH_MOVE_CONCURRENCY moves at a time in each process: one waiting for a server (its
    // freeze, its thaw) does not hold up the others.
    workers: [{ ...operationWorker(JOBS.accountMove, moveRunner(svc, o)), concurrency: svc.config.moveConcurrency }],
    loops: [drainer(svc, moves, o.servers, onError), forwardingEnds(svc, onError)],
  };
}

/**
 * A server given new addresses (ServerHooks.addressesChanged): the moves whose sources forward to
 * it run their `forward` step again once the change commits, which reads its addresses then, so
 * that the sources proxy and relay to the new ones until the forwarding's time is over.
 */
export const forwardsFollowTarget = (jobs: JobQueue) => async (tx: Queryable, serverId: string) => {
  for (const move of await forwardingTo(tx, serverId)) await sendMoveJob(jobs, tx, move.operation_id);
};
