import type { FastifyInstance } from 'fastify';
import type { Contribution } from '../../contribution.js';
import { periodic } from '../../jobs/periodic.js';
import type { AgentUnitSource } from '../../provisioning/agent-units.js';
import type { CertificateAuthority } from '../../tls/internal-ca.js';
import type { ServiceDeps } from '../deps.js';
import { agentListener, agentUrl, caFingerprint } from './agent-listener.js';
import { forwardUnits } from './forwards.js';
import { foldServerCounts } from './repo.js';
import { serverRoutes } from './routes.js';
import { serverSchemas } from './schemas.js';
import { type ServerHooks, serversService } from './service.js';
import { AGENT_WAIT_MS } from './status.js';
import { pruneStaleTasks, taskUnits } from './tasks.js';
import { withdrawalUnits } from './withdrawals.js';

/**
 * Hosting servers: the operator's fleet, where accounts are placed, and — with
 * BERTH_AGENT_LISTEN — the agent listener their agents enrol and poll at. The listener is
 * returned unstarted: it listens when the app does.
 */
export async function serversModule(
  svc: ServiceDeps,
  hooks: ServerHooks,
  agents: { authority: () => Promise<CertificateAuthority>; sources: AgentUnitSource[] },
  onError: (err: unknown) => void,
) {
  const url = agentUrl(svc.config);
  // Listening on port 0 (tests), the command names the port the listener was given.
  const boundUrl = () => {
    const address = listener?.server.address();
    return url && address && typeof address === 'object' ? url.replace(/:0$/, `:${address.port}`) : (url as string);
  };
  const service = serversService(
    svc,
    hooks,
    url ? { url: boundUrl, caFingerprint: () => caFingerprint(agents.authority) } : null,
  );
  const listener: FastifyInstance | null = url
    ? await agentListener({
        ...svc,
        ...agents,
        // Withdrawals first: a new account of a withdrawn one's name is applied after it is gone;
        // forwards after the units they render again; tasks last: a load finds the unit it restores applied.
        sources: [withdrawalUnits, ...agents.sources, forwardUnits, taskUnits],
        announce: (serverId) => service.announceStatuses(serverId),
        onError,
      })
    : null;
  const contribution: Contribution = {
    schemas: serverSchemas,
    routes: (app) => serverRoutes(app, service),
    // A server that stopped polling is announced unreachable within a wait of passing the limit.
    loops: url ? [periodic(() => service.announceStatuses(), AGENT_WAIT_MS / 3, onError)] : [],
    housekeeping: [() => pruneStaleTasks(svc.db), () => foldServerCounts(svc.db)],
  };
  return { contribution, service, listener };
}
