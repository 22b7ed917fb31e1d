import type { Contribution } from '../../contribution.js';
import type { ServiceDeps } from '../deps.js';
import { planRoutes } from './routes.js';
import { planSchemas } from './schemas.js';
import { type PlanHooks, plansService } from './service.js';

export const plansModule = (svc: ServiceDeps, hooks?: PlanHooks): Contribution => ({
  schemas: planSchemas,
  routes: (app) => planRoutes(app, plansService(svc, hooks)),
});
