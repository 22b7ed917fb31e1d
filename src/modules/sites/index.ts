/** The sites module's public surface: what other modules may use. */
export { unpackArchive } from '../../archives/unpack.js';
export { hasPendingDeployment } from './deployments/repo.js';
export { type DeploymentsService } from './deployments/service.js';

export { findSiteByHostname, findSiteById, listSites } from './repo.js';
export { toSite } from './representation.js';
export { type SitesService } from './service.js';
