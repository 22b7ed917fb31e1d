import { itemRoute, reachOf, resourceRoutes } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { IdParams } from '../../http/schemas.js';
import { CreateServer, ServerListQuery, ServerMutable } from './schemas.js';
import type { ServersService } from './service.js';

const OPERATOR_ONLY = 'Operator tokens only: servers are the provider’s, never a reseller’s or an account’s.';

export function serverRoutes(app: App, svc: ServersService): void {
  resourceRoutes(app, {
    path: '/v1/servers',
    prefix: 'srv',
    tags: ['servers'],
    resource: 'Server',
    area: 'servers',
    load: svc.load,
    list: {
      operationId: 'listServers',
      summary: 'List hosting servers (operator only)',
      description: `${OPERATOR_ONLY} Filter by a role or a status.`,
      querystring: ServerListQuery,
      list: svc.list,
    },
    create: {
      operationId: 'createServer',
      summary: 'Add a hosting server (operator only)',
      description: `${OPERATOR_ONLY} Answers with a one-use enrolment token, valid for one hour and shown once, and the exact \`berth agent enrol\` command to run on the machine. Needs an agent listener (\`BERTH_AGENT_LISTEN\`); without one, 409 \`invalid_state\`.`,
      body: CreateServer,
      response: 'ServerWithEnrolment',
      create: svc.create,
    },
    get: { summary: 'Get a hosting server', description: OPERATOR_ONLY, get: svc.get },
    update: {
      noun: 'server',
      description: `${OPERATOR_ONLY} A role cannot be taken away while accounts are placed on the server for it (422). New addresses (\`ipv4\`, \`ipv6\`) renumber the server: the A and AAAA records of the accounts it serves (web and mail) that point at an address it had are changed to the new one, a zone at a time, shortly after the answer, each as any record change (serial, events, applied). An address taken away with none of its family in its place (\`ipv6: null\`) deletes the records that pointed at it; an address of a family the server had none of gives the template's names (\`@\`, \`www\`, \`mail\`) pointing at the server a record at it, unless the name has one of that family.`,
      mutable: ServerMutable,
      update: svc.update,
    },
    remove: {
      operationId: 'deleteServer',
      summary: 'Remove a hosting server without accounts',
      description: `${OPERATOR_ONLY} Refused with 409 \`server_not_empty\` while any account is placed on it, and with 409 \`invalid_state\` for the local server; its agent's certificate is refused from then on.`,
      remove: svc.remove,
    },
  });

  itemRoute(app, {
    method: 'POST',
    path: '/v1/servers/:server_id/drain',
    tags: ['servers'],
    operationId: 'drainServer',
    summary: 'Move every account off a server (operator only)',
    description: `${OPERATOR_ONLY} The server turns \`draining\` (\`server.draining\`) and takes no new account; each account placed on it gets a move (\`POST /v1/accounts/{account_id}/move\`, \`cutover: auto\`) of the roles it holds there to the servers the placement policy picks, at most \`BERTH_MOVE_CONCURRENCY\` (2) at a time. An account whose move failed is tried again, three times at most; then it waits for the operator. Once the server holds no account it is \`decommissioned\` (\`server.decommissioned\`) and can be deleted. A repeated request changes nothing.`,
    scope: 'servers:write',
    reach: reachOf(svc.load),
    params: IdParams('srv'),
    response: 'Server',
    run: async (caller, params) => svc.drain(caller, params.server_id),
  });

  itemRoute(app, {
    method: 'POST',
    path: '/v1/servers/:server_id/enrolment',
    tags: ['servers'],
    operationId: 'createServerEnrolment',
    summary: 'A new enrolment for a server (operator only)',
    description:
      'A new one-use token and command, for a reinstalled machine or a lost key. Any earlier token stops working; the agent’s current certificate stays valid until the new token is spent, and is revoked then.',
    scope: 'servers:write',
    reach: reachOf(svc.load),
    params: IdParams('srv'),
    response: 'ServerWithEnrolment',
    run: async (caller, params) => svc.newEnrolment(caller, params.server_id),
  });
}
