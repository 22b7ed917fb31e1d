import type { AgentForward, AgentUnit } from '../provisioning/agent-units.js';
import { forwardedSite } from '../provisioning/render/nginx.js';
import type { AgentDrivers } from './drivers.js';
import { applyMailUnit } from './mail.js';

/**
 * A moved account's share of this server, forwarded to its new servers (the units the agent
 * keeps of it): each of its sites answers by proxying to the new web server, each of its mail
 * domains takes mail and relays it to the new mail server. Its files stay until its withdrawal.
 */
export async function applyForward(
  o: { dataDir: string; drivers: Pick<AgentDrivers, 'web' | 'mail'> },
  spec: AgentForward,
  kept: AgentUnit[],
): Promise<void> {
  for (const unit of kept) {
    if (unit.kind === 'web' && spec.web && unit.spec.account_id === spec.account_id && !unit.spec.removed)
      await o.drivers.web.applySite(
        forwardedSite({ id: unit.spec.site_id, hostnames: unit.spec.hostnames, tls: unit.spec.tls }, spec.web),
      );
    if (unit.kind === 'mail' && spec.mail && unit.spec.account_id === spec.account_id && unit.spec.enabled && !unit.spec.removed)
      await applyMailUnit(
        { dataDir: o.dataDir, mail: o.drivers.mail },
        unit.key,
        { ...unit.spec, domain: { ...unit.spec.domain, relay: spec.mail } },
        kept,
      );
  }
}
