import type { Contribution } from '../../contribution.js';
import type { ServiceDeps } from '../deps.js';
import { tokenRoutes } from './routes.js';
import { tokenSchemas } from './schemas.js';
import { tokensService } from './service.js';

export const tokensModule = (svc: ServiceDeps): Contribution => ({
  schemas: tokenSchemas,
  routes: (app) => tokenRoutes(app, tokensService(svc)),
});
