import { resourceRoutes } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { CreatePlan, PlanListQuery, PlanMutable } from './schemas.js';
import type { PlansService } from './service.js';

export function planRoutes(app: App, svc: PlansService): void {
  resourceRoutes(app, {
    path: '/v1/plans',
    prefix: 'pln',
    tags: ['plans'],
    resource: 'Plan',
    area: 'plans',
    load: svc.load,
    list: {
      operationId: 'listPlans',
      summary: 'List plans',
      description: "Global plans and, for resellers and their accounts, the reseller's own.",
      querystring: PlanListQuery,
      list: svc.list,
    },
    create: {
      operationId: 'createPlan',
      summary: 'Create a plan',
      description:
        'Operators create global plans, resellers their own (their accounts only may use them). A name the owner already uses is 409 `already_exists`.',
      body: CreatePlan,
      response: 'Plan',
      create: svc.create,
    },
    get: { summary: 'Get a plan', get: svc.get },
    update: { noun: 'plan', mutable: PlanMutable, update: svc.update },
    remove: {
      operationId: 'deletePlan',
      summary: 'Delete a plan no account uses',
      description: 'Refused with 409 `in_use` while hosting accounts use the plan: move them to another plan first.',
      remove: svc.remove,
    },
  });
}
