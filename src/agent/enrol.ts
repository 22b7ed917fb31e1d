import { get } from 'node:https';
import { certificateFingerprint, certificateRequest } from '../tls/internal-ca.js';
import { generateKey } from '../tls/keys.js';
import { agentCall } from './client.js';
import { type Identity, saveIdentity } from './state.js';

/** The listener's CA, fetched before anything is trusted and kept only if its fingerprint is the one given. */
function fetchCa(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // Not verified yet on purpose: the fingerprint check below is the trust decision.
    const req = get(new URL('/agent/v1/ca', url), { rejectUnauthorized: false, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString('utf8'))
          : reject(new Error(`GET /agent/v1/ca: ${res.statusCode}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in time`)));
    req.on('error', reject);
  });
}

/**
 * `berth agent enrol`: makes the server's key pair here (the private key never leaves the
 * machine), checks the control plane's CA against the fingerprint the operator was given, and
 * trades the one-use token and a CSR for a client certificate. Throws with the reason.
 */
export async function enrol(o: { url: string; token: string; caFingerprint: string; dataDir: string }): Promise<Identity> {
  const url = new URL(o.url);
  if (url.protocol !== 'https:') throw new Error('--url must be an https:// URL');
  const caPem = await fetchCa(url.toString());
  if (certificateFingerprint(caPem) !== o.caFingerprint.toLowerCase())
    throw new Error(`the control plane's CA is not the one named by --ca-fingerprint (it is ${certificateFingerprint(caPem)})`);
  const keyPem = await generateKey();
  const res = await agentCall(url.toString(), { ca_pem: caPem }, 'POST', '/agent/v1/enrol', {
    token: o.token,
    csr: await certificateRequest(keyPem, 'berth-agent'),
  });
  if (res.status !== 201) throw new Error(`enrolment refused (${res.status}): ${res.body?.detail ?? res.text.slice(0, 200)}`);
  const identity: Identity = {
    url: url.toString(),
    server_id: String(res.body?.server_id),
    key_pem: keyPem,
    certificate_pem: String(res.body?.certificate_pem),
    ca_pem: caPem,
  };
  await saveIdentity(o.dataDir, identity);
  return identity;
}
