import { systemCaller } from '../../auth/caller.js';
import { periodic } from '../../jobs/periodic.js';
import { AppError } from '../../lib/errors.js';
import { accountsPlacedOn, choosePlacement, countAccountsOn } from '../accounts/index.js';
import type { ServiceDeps } from '../deps.js';
import { activeMovesFrom, exhaustedByDrain } from './repo.js';
import type { MovesService } from './service.js';

/** How often each process looks at the draining servers (a move takes seconds at least). */
const DRAIN_EVERY_MS = 1000;
/** A drain tries an account's move this many times, then leaves it to the operator. */
const ATTEMPTS = 3;

/** What the drainer needs of the servers module: which servers drain, and marking one drained. */
export interface DrainingServers {
  draining(): Promise<string[]>;
  decommission(id: string): Promise<void>;
}

/**
 * Drains servers: for each draining server, starts moves of the accounts placed on it (the roles
 * it holds, each to the server the placement policy picks), at most `BERTH_MOVE_CONCURRENCY`
 * copying at a time, and marks it decommissioned once it holds no account and forwards none.
 * One process at a time (a session lock), so the bound holds however many processes run it.
 */
export function drainer(deps: ServiceDeps, moves: MovesService, servers: DrainingServers, onError: (err: unknown) => void) {
  const { db, clock, config } = deps;
  const caller = systemCaller('drain');

  async function drainOne(serverId: string): Promise<void> {
    // Moves that forward (for up to the records' old TTLs) take no room: their copy is done.
    const { copying, forwarding } = await activeMovesFrom(db, serverId);
    if (copying + forwarding === 0 && ((await countAccountsOn(db, [serverId])).get(serverId) ?? 0) === 0)
      return servers.decommission(serverId);
    const room = config.moveConcurrency - copying;
    if (room <= 0) return;
    const candidates = await accountsPlacedOn(db, serverId, room + 100);
    const exhausted = await exhaustedByDrain(
      db,
      serverId,
      candidates.map((a) => a.id),
      ATTEMPTS,
    );
    for (const account of candidates.filter((a) => !exhausted.has(a.id)).slice(0, room)) {
      try {
        const to = await db.transaction((tx) =>
          choosePlacement(tx, account.roles, { now: clock.now(), dataDir: config.dataDir }),
        );
        await moves.create(caller, account.id, { to, cutover: 'auto' }, serverId);
      } catch (err) {
        // No room anywhere, or a move took the account meanwhile: the next look tries again.
        if (!(err instanceof AppError)) throw err;
      }
    }
  }

  return periodic(
    () =>
      db.withSessionLock('moves.drain', async () => {
        for (const id of await servers.draining()) await drainOne(id);
      }),
    DRAIN_EVERY_MS,
    onError,
  );
}
