import type { Contribution } from '../../contribution.js';
import type { ServiceDeps } from '../deps.js';
import { loginLinks, pruneLoginCodes } from './login-links.js';
import { tokenRoutes } from './routes.js';
import { tokenSchemas } from './schemas.js';
import { tokensService } from './service.js';

export const tokensModule = (svc: ServiceDeps): Contribution => ({
  schemas: tokenSchemas,
  routes: (app) => tokenRoutes(app, tokensService(svc), loginLinks(svc), svc.config.baseUrl),
  housekeeping: [(now) => pruneLoginCodes(svc.db, now)],
});
