import type { Queryable } from '../../../db/client.js';
import { publishEvent } from '../../publishing/index.js';
import type { SiteRow } from '../repo.js';
import type { DeploymentRow } from './repo.js';
import type { Deployment } from './schemas.js';

/** The API representation of a deployment. */
export const toDeployment = (r: DeploymentRow): Deployment => ({
  id: r.id,
  site_id: r.site_id,
  status: r.status,
  format: r.format,
  archive_bytes: r.archive_bytes,
  size_bytes: r.size_bytes,
  file_count: r.file_count,
  error: r.error,
  live_at: r.live_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

export const deploymentEvent = (tx: Queryable, type: string, site: SiteRow, d: DeploymentRow) =>
  publishEvent(tx, {
    type,
    accountId: site.account_id,
    resellerId: site.reseller_id,
    resource: { type: 'deployment', id: d.id, version: d.version },
    data: toDeployment(d),
  });
