import type { Contribution } from '../../contribution.js';
import type { ServiceDeps } from '../deps.js';
import { resellerRoutes } from './routes.js';
import { resellerSchemas } from './schemas.js';
import { resellersService } from './service.js';

export const resellersModule = (svc: ServiceDeps): Contribution => ({
  schemas: resellerSchemas,
  routes: (app) => resellerRoutes(app, resellersService(svc)),
});
