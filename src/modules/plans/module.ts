import type { Contribution } from '../../contribution.js';
import type { ServiceDeps } from '../deps.js';
import { planRoutes } from './routes.js';
import { planSchemas } from './schemas.js';
import { plansService } from './service.js';

export const plansModule = (svc: ServiceDeps): Contribution => ({
  schemas: planSchemas,
  routes: (app) => planRoutes(app, plansService(svc)),
});
