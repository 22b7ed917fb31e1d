import { itemRoute, reachOf, resourceRoutes } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { IdParams } from '../../http/schemas.js';
import { CreateMove, MoveListQuery } from './schemas.js';
import type { MovesService } from './service.js';

const OPERATOR_ONLY = 'Operator tokens only: moves name servers, which are the provider’s.';

export function moveRoutes(app: App, svc: MovesService): void {
  const tags = ['moves'];
  const reach = reachOf(svc.load);

  resourceRoutes(app, {
    path: '/v1/moves',
    prefix: 'mov',
    tags,
    resource: 'Move',
    area: 'servers',
    load: svc.load,
    list: {
      operationId: 'listMoves',
      summary: 'List moves (operator only)',
      description: `${OPERATOR_ONLY} Filter by account or status.`,
      querystring: MoveListQuery,
      list: svc.list,
    },
    get: { summary: 'Get a move', description: `${OPERATOR_ONLY} Its steps, bytes copied and times.`, get: svc.get },
  });

  itemRoute(app, {
    method: 'POST',
    path: '/v1/accounts/:account_id/move',
    tags,
    operationId: 'moveAccount',
    summary: 'Move an account to other servers (operator only)',
    description: `${OPERATOR_ONLY} 202 with an \`account.move\` operation and the move. The account is held from now on: deployments, backups, restores, its termination and another move answer 409 \`account_moving\`; other writes go on. The steps: the records pointing at the source get \`BERTH_MOVE_TTL_S\`; its files, maildirs and databases are copied from the source through the control plane while it serves them (the databases' dumps loaded on the target as they arrive); the account is frozen (its sites answer 503, logins are refused) and what changed since is copied (of a database, the tables whose rows, definition or triggers differ from the target's copy; the whole database where its views, routines or events changed or the servers' versions differ) and verified; it is placed on the target, the copy put there and the records pointed there (those of an address family the target lacks deleted, and the template's names given one of a family the target adds); it is served again, by the target; the source forwards to the target (its sites proxied, its mail relayed) until \`forward_until\`, while resolvers may hold its address; the source is cleaned up (another server's agent withdraws its share; the local server's share is taken away in-process) and the TTLs restored. A failure before the cutover leaves the account where it was. Events \`account.move.started\`, \`ready\`, \`cut_over\`, \`completed\`, \`failed\`, \`canceled\`.`,
    scope: 'servers:write',
    params: IdParams('acc'),
    body: CreateMove,
    response: 'MoveWithOperation',
    accepted: true,
    run: (caller, { account_id }, body) => svc.create(caller, account_id, body),
  });

  itemRoute(app, {
    method: 'POST',
    path: '/v1/moves/:move_id/cancel',
    tags,
    operationId: 'cancelMove',
    summary: 'Cancel a move before its cutover',
    description: `${OPERATOR_ONLY} The move rolls back: the account is thawed and served by its source as before, its TTLs restored, the copy removed; \`account.move.canceled\`. 409 \`invalid_state\` once the move has cut over or ended.`,
    scope: 'servers:write',
    reach,
    params: IdParams('mov'),
    response: 'Move',
    run: (caller, { move_id }) => svc.cancel(caller, move_id),
  });

  itemRoute(app, {
    method: 'POST',
    path: '/v1/moves/:move_id/cutover',
    tags,
    operationId: 'cutOverMove',
    summary: 'Cut a manual move over',
    description: `${OPERATOR_ONLY} A move made with \`cutover: manual\` waits in \`ready\` (the account served by its source, unfrozen) until this request; 409 \`invalid_state\` otherwise.`,
    scope: 'servers:write',
    reach,
    params: IdParams('mov'),
    response: 'Move',
    run: (caller, { move_id }) => svc.cutover(caller, move_id),
  });
}
