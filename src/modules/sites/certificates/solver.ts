import { acmeChallengeDir } from '../../../layout.js';
import { httpProofs } from '../../../tls/http-proofs.js';
import type { Challenge, ChallengeSolver } from '../../../tls/issuer.js';
import type { AcmeChallengeRecords } from '../../domains/index.js';

/**
 * Proofs for one site's names: HTTP-01 as files the web server serves (`tls/http-proofs.ts`),
 * DNS-01 as TXT records in the account's zone (one zone change per name, its values together),
 * and `present` returns once the DNS server serves them.
 */
export function siteSolver(dataDir: string, accountId: string, dns: AcmeChallengeRecords): ChallengeSolver {
  const http = httpProofs(acmeChallengeDir(dataDir));
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
