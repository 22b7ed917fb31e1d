import type { Queryable } from '../../db/client.js';
import { publicMessage } from '../../lib/errors.js';
import { publishResourceEvent } from '../publishing/index.js';
import type { SiteRow } from './repo.js';
import type { Site } from './schemas.js';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** A site's HTTPS: what the owner asked for and the state of the certificate that serves it. */
function toTls(r: SiteRow, now = new Date()): Site['tls'] {
  const expired = r.tls_status === 'active' && r.tls_not_after !== null && new Date(r.tls_not_after) <= now;
  return {
    mode: r.tls_mode,
    status: r.tls_mode === 'none' || !r.tls_status ? ('none' as const) : expired ? ('expired' as const) : r.tls_status,
    issuer: r.tls_mode === 'none' ? null : r.tls_issuer,
    names: r.tls_mode === 'none' ? [] : (r.tls_names ?? []),
    not_before: iso(r.tls_not_before),
    expires_at: iso(r.tls_not_after),
    renew_after: r.tls_mode === 'auto' ? iso(r.tls_renew_after) : null,
    redirect_http: r.tls_redirect_http,
    hsts: r.tls_hsts,
    error: r.tls_mode === 'none' ? null : r.tls_error,
  };
}

/** The API representation of a site. */
export const toSite = (r: SiteRow): Site => ({
  id: r.id,
  account_id: r.account_id,
  hostname: r.hostname,
  aliases: r.aliases,
  runtime: r.runtime,
  php: r.php,
  status: r.status,
  suspension: r.status === 'suspended' ? { reason: r.suspension_reason ?? '' } : null,
  current_deployment_id: r.current_deployment_id,
  url: `${r.tls_status === 'active' && r.tls_mode !== 'none' ? 'https' : 'http'}://${r.hostname}/`,
  disk_bytes: r.disk_bytes,
  tls: toTls(r),
  error: r.error,
  sync_state: r.sync_state,
  sync_error: r.sync_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version: r.version,
});

export const siteEvent = (tx: Queryable, type: string, r: SiteRow) => publishResourceEvent(tx, type, 'site', r, toSite(r));

/** The problem a failed site operation records (its `error`). */
export const problem = (err: unknown, code: string) => ({ code, title: 'Provisioning failed', detail: publicMessage(err) });
