import { itemRoute, listRoute } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { IdParams } from '../../http/schemas.js';
import { OperationListQuery } from './schemas.js';
import type { OperationsService } from './service.js';

export function operationRoutes(app: App, svc: OperationsService): void {
  const tags = ['operations'];
  listRoute(app, {
    path: '/v1/operations',
    tags,
    operationId: 'listOperations',
    summary: 'List operations',
    description: "Operations on resources in the token's reach; any scope may read them.",
    querystring: OperationListQuery,
    item: 'Operation',
    list: svc.list,
  });

  itemRoute(app, {
    method: 'GET',
    path: '/v1/operations/:operation_id',
    tags,
    operationId: 'getOperation',
    summary: 'Get an operation',
    description:
      'The state of asynchronous work (`queued`, `running`, `succeeded`, `failed`, `canceled`), with `progress` and, when it ended, its `result` or `error`. Poll it, or subscribe to its webhook events.',
    params: IdParams('op'),
    response: 'Operation',
    run: (caller, { operation_id }) => svc.get(caller, operation_id),
  });

  itemRoute(app, {
    method: 'POST',
    path: '/v1/operations/:operation_id/cancel',
    tags,
    operationId: 'cancelOperation',
    summary: 'Cancel a queued operation',
    description:
      "Needs the write scope of the resource's area (accounts:write for account.terminate). 409 invalid_state once it runs.",
    params: IdParams('op'),
    response: 'Operation',
    run: (caller, { operation_id }) => svc.cancel(caller, operation_id),
  });
}
