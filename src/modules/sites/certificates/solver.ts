import type { Db } from '../../../db/client.js';
import { acmeChallengeDir } from '../../../layout.js';
import type { Clock } from '../../../lib/time.js';
import type { AgentTask } from '../../../provisioning/agent-units.js';
import { httpProofs } from '../../../tls/http-proofs.js';
import type { Challenge, ChallengeSolver } from '../../../tls/issuer.js';
import { findAccountById } from '../../accounts/index.js';
import type { AcmeChallengeRecords } from '../../domains/index.js';
import { LOCAL_SERVER_ID, runAgentTask } from '../../servers/index.js';

/** An agent places proofs in moments; one that takes longer would see the order expire anyway. */
const PROOF_TIMEOUT_MS = 2 * 60_000;

/**
 * HTTP-01 proofs where the account's web server serves them: files in this process's challenge
 * directory for the local server (`tls/http-proofs.ts`), a task for the agent of another, which
 * returns once the agent has placed them.
 */
export function webServerProofs(deps: { db: Db; clock: Clock; dataDir: string }, accountId: string): ChallengeSolver {
  const here = httpProofs(acmeChallengeDir(deps.dataDir));
  const http = (challenges: Challenge[]) => challenges.filter((c) => c.type === 'http-01');
  const remoteServer = async () => {
    const id = (await findAccountById(deps.db, accountId))?.web_server_id;
    return id && id !== LOCAL_SERVER_ID ? id : null;
  };
  const onAgent = (serverId: string, task: AgentTask) =>
    runAgentTask(deps.db, deps.clock, serverId, task, { timeoutMs: PROOF_TIMEOUT_MS });
  return {
    async present(challenges) {
      const server = await remoteServer();
      if (!server) return here.present(challenges);
      const proofs = http(challenges).map((c) => ({ token: c.token, key_authorization: c.keyAuthorization }));
      if (proofs.length > 0) await onAgent(server, { action: 'acme.present', proofs });
    },
    async cleanUp(challenges) {
      const server = await remoteServer();
      if (!server) return here.cleanUp(challenges);
      const tokens = http(challenges).map((c) => c.token);
      if (tokens.length > 0) await onAgent(server, { action: 'acme.clean_up', tokens });
    },
  };
}

/**
 * Proofs for one site's names: HTTP-01 by `http` (webServerProofs), DNS-01 as TXT records in the
 * account's zone (one zone change per name, its values together), and `present` returns once
 * the DNS server serves them.
 */
export function siteSolver(http: ChallengeSolver, accountId: string, dns: AcmeChallengeRecords): ChallengeSolver {
  const byName = (challenges: Challenge[]) => {
    const names = new Map<string, string[]>();
    for (const c of challenges.filter((x) => x.type === 'dns-01'))
      names.set(c.identifier, [...(names.get(c.identifier) ?? []), c.keyAuthorization]);
    return names;
  };
  return {
    async present(challenges) {
      await http.present(challenges);
      const zones = [];
      for (const [name, values] of byName(challenges)) {
        const zone = await dns.set(accountId, name, values);
        if (!zone) throw new Error(`DNS-01 for ${name} needs its zone hosted by Berth in the same account`);
        zones.push(zone);
      }
      for (const zone of zones) await dns.served(zone);
    },
    async cleanUp(challenges) {
      await http.cleanUp(challenges);
      for (const name of byName(challenges).keys()) await dns.set(accountId, name, []);
    },
  };
}
