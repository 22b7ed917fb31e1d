import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Challenge, ChallengeSolver } from './issuer.js';

/** ACME tokens are base64url: nothing else may become a file name. */
const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;

const httpChallenges = (challenges: Challenge[]) => challenges.filter((c) => c.type === 'http-01');

/**
 * HTTP-01 proofs as files in `dir`, the directory the web server serves at
 * `/.well-known/acme-challenge/` (the nginx renderer puts that location in every plain-HTTP
 * block). Other challenge types are left to whoever composes this solver.
 */
export function httpProofs(dir: string): ChallengeSolver {
  return {
    async present(challenges) {
      await mkdir(dir, { recursive: true });
      for (const c of httpChallenges(challenges)) {
        if (!TOKEN.test(c.token)) throw new Error('the ACME server sent a token that is not base64url');
        await writeFile(path.join(dir, c.token), c.keyAuthorization, { mode: 0o644 });
      }
    },
    async cleanUp(challenges) {
      for (const c of httpChallenges(challenges).filter((x) => TOKEN.test(x.token)))
        await rm(path.join(dir, c.token), { force: true });
    },
  };
}
