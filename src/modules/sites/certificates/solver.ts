import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { acmeChallengeDir } from '../../../layout.js';
import type { Challenge, ChallengeSolver } from '../../../tls/issuer.js';
import type { AcmeChallengeRecords } from '../../domains/index.js';

/** ACME tokens are base64url: nothing else may become a file name. */
const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;

/**
 * Proofs for one site's names: HTTP-01 as files in the directory every server block serves at
 * `/.well-known/acme-challenge/`, DNS-01 as TXT records in the account's zone (one zone change per
 * name, its values together), and `present` returns once the DNS server serves them.
 */
export function siteSolver(dataDir: string, accountId: string, dns: AcmeChallengeRecords): ChallengeSolver {
  const dir = acmeChallengeDir(dataDir);
  const byName = (challenges: Challenge[]) => {
    const names = new Map<string, string[]>();
    for (const c of challenges.filter((x) => x.type === 'dns-01'))
      names.set(c.identifier, [...(names.get(c.identifier) ?? []), c.keyAuthorization]);
    return names;
  };
  return {
    async present(challenges) {
      await mkdir(dir, { recursive: true });
      for (const c of challenges.filter((x) => x.type === 'http-01')) {
        if (!TOKEN.test(c.token)) throw new Error('the ACME server sent a token that is not base64url');
        await writeFile(path.join(dir, c.token), c.keyAuthorization, { mode: 0o644 });
      }
      const zones = [];
      for (const [name, values] of byName(challenges)) {
        const zone = await dns.set(accountId, name, values);
        if (!zone) throw new Error(`DNS-01 for ${name} needs its zone hosted by Berth in the same account`);
        zones.push(zone);
      }
      for (const zone of zones) await dns.served(zone);
    },
    async cleanUp(challenges) {
      for (const c of challenges.filter((x) => x.type === 'http-01' && TOKEN.test(x.token)))
        await rm(path.join(dir, c.token), { force: true });
      for (const name of byName(challenges).keys()) await dns.set(accountId, name, []);
    },
  };
}
