import type { Caller } from '../../auth/caller.js';
import type { Queryable } from '../../db/client.js';
import { invalid, noCapacity } from '../../lib/errors.js';
import {
  findServerById,
  LOCAL_SERVER_ID,
  noRoomOn,
  placementCandidates,
  type Role,
  ROLES,
  serverStatus,
  withdrawAccount,
} from '../servers/index.js';
import { type AccountRow, countAccountsOn } from './repo.js';
import type { Placement } from './schemas.js';

/**
 * Where a new account lives, inside its creation's transaction. An operator may name a server
 * for a role (it must have the role); every other role goes by the default policy: among the
 * online servers with the role and placement enabled, the one holding the fewest accounts that
 * still has capacity (their rows are locked, so concurrent creations count one at a time).
 */
export async function placeAccount(
  tx: Queryable,
  caller: Caller,
  wanted: Partial<Placement> | undefined,
  at: PlacedAt,
): Promise<Placement> {
  if (wanted && Object.keys(wanted).length > 0 && caller.principal.kind !== 'operator') {
    throw invalid([{ pointer: '/placement', code: 'not_allowed', detail: 'is chosen by the placement policy' }]);
  }
  const placement: Partial<Placement> = {};
  for (const role of ROLES) {
    const id = wanted?.[role];
    if (id) {
      const server = await findServerById(tx, id);
      if (!server?.roles.includes(role)) {
        throw invalid([
          { pointer: `/placement/${role}`, code: 'unknown_server', detail: `is not a server with the role ${role}` },
        ]);
      }
      placement[role] = id;
      continue;
    }
    placement[role] = await chooseServer(tx, role, at);
  }
  return placement as Placement;
}

/** When a placement is chosen, and the local server's data directory (whose disk is its `usage.disk_bytes`). */
export interface PlacedAt {
  now: Date;
  dataDir: string;
}

/**
 * The default policy for one role: the online server with the role and room (accounts and disk
 * below its capacity) that holds the fewest accounts (409 `no_capacity`).
 */
async function chooseServer(tx: Queryable, role: Role, at: PlacedAt): Promise<string> {
  const online = (await placementCandidates(tx, role)).filter((s) => serverStatus(s, at.now) === 'online');
  const counts = await countAccountsOn(
    tx,
    online.map((s) => s.id),
  );
  const byHeld = online
    .map((server) => ({ server, held: counts.get(server.id) ?? 0 }))
    .sort((a, b) => a.held - b.held || a.server.id.localeCompare(b.server.id));
  for (const { server, held } of byHeld) if (!(await noRoomOn(server, held, at.dataDir))) return server.id;
  throw noCapacity(role);
}

/** Where the default policy would place `roles` of an account now (a drain's targets), inside the caller's transaction. */
export async function choosePlacement(tx: Queryable, roles: Role[], at: PlacedAt): Promise<Partial<Placement>> {
  const placement: Partial<Placement> = {};
  for (const role of roles) placement[role] = await chooseServer(tx, role, at);
  return placement;
}

/**
 * A terminated account's share of other servers (its sites, pools, Unix user, mail and databases
 * there) is withdrawn by their agents: its rows go with it, so no unit names them any more.
 */
export async function withdrawFromServers(tx: Queryable, account: AccountRow): Promise<void> {
  const roles = new Map<string, Role[]>();
  const placed: [Role, string][] = [
    ['web', account.web_server_id],
    ['mail', account.mail_server_id],
    ['database', account.database_server_id],
  ];
  for (const [role, id] of placed) if (id !== LOCAL_SERVER_ID) roles.set(id, [...(roles.get(id) ?? []), role]);
  for (const [id, held] of roles) await withdrawAccount(tx, id, account, held);
}
