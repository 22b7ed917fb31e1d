import type { Contribution } from '../../contribution.js';
import type { ServiceDeps } from '../deps.js';
import { planRoutes, planSchemas } from './routes.js';
import { plansService } from './service.js';

export const plansModule = (svc: ServiceDeps): Contribution => ({
  schemas: planSchemas,
  routes: (app) => planRoutes(app, plansService(svc)),
});
