import type { Contribution } from '../../contribution.js';
import type { ServiceDeps } from '../deps.js';
import { operationRoutes } from './routes.js';
import { operationSchemas } from './schemas.js';
import { operationsService, type CancelHandler } from './service.js';

/** Canceling a queued operation undoes what its module says (`cancelHandlers` of each). */
export const operationsModule = (svc: ServiceDeps, cancelHandlers: [string, CancelHandler][]): Contribution => ({
  schemas: operationSchemas,
  routes: (app) => operationRoutes(app, operationsService(svc, new Map(cancelHandlers))),
});
