import type { Contribution } from '../../contribution.js';
import type { ServiceDeps } from '../deps.js';
import { pruneEvents } from './repo.js';
import { eventRoutes } from './routes.js';
import { eventSchemas } from './schemas.js';
import { eventsService } from './service.js';

/** The feed keeps 30 days. */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export const eventsModule = (svc: ServiceDeps): Contribution => ({
  schemas: eventSchemas,
  routes: (app) => eventRoutes(app, eventsService(svc)),
  housekeeping: [(now) => pruneEvents(svc.db, new Date(now.getTime() - EVENT_RETENTION_MS))],
});
