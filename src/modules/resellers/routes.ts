import { resourceRoutes } from '../../http/crud.js';
import type { App } from '../../http/routes.js';
import { CreateReseller, ResellerListQuery, ResellerMutable } from './schemas.js';
import type { ResellersService } from './service.js';

export function resellerRoutes(app: App, svc: ResellersService): void {
  resourceRoutes(app, {
    path: '/v1/resellers',
    prefix: 'rsl',
    tags: ['resellers'],
    resource: 'Reseller',
    area: 'resellers',
    load: svc.load,
    list: {
      operationId: 'listResellers',
      summary: 'List resellers',
      description: 'Operators see every reseller; a reseller sees only itself.',
      querystring: ResellerListQuery,
      list: svc.list,
    },
    create: {
      operationId: 'createReseller',
      summary: 'Create a reseller (operator only)',
      description: 'Operator tokens only. A reseller owns plans and hosting accounts; its own tokens reach only those.',
      body: CreateReseller,
      response: 'Reseller',
      create: svc.create,
    },
    get: {
      summary: 'Get a reseller',
      get: svc.get,
    },
    update: {
      noun: 'reseller',
      mutable: ResellerMutable,
      update: svc.update,
    },
    remove: {
      operationId: 'deleteReseller',
      summary: 'Delete a reseller without accounts',
      description: 'Refused with 409 `in_use` while the reseller has hosting accounts; its own plans and tokens go with it.',
      remove: svc.remove,
    },
  });
}
