import type { RequestListener } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll } from 'vitest';
import {
  createCertificateAuthority,
  signWithCertificateAuthority,
  type CertificateAuthority,
} from '../../src/tls/internal-ca.js';
import { generateKey } from '../../src/tls/keys.js';

/**
 * An HTTPS listener on 127.0.0.1 standing in for the control plane's agent listener, with a
 * certificate from a CA of its own (`ca().certificate_pem` is what a client trusts); each test's
 * listener is closed after it.
 */
export function httpsListener() {
  let ca: CertificateAuthority;
  let tls: { key: string; cert: string };
  let server: https.Server | undefined;
  beforeAll(async () => {
    ca = await createCertificateAuthority('test', new Date());
    const key = await generateKey();
    tls = { key, cert: await signWithCertificateAuthority(ca, ['127.0.0.1'], key, new Date()) };
  });
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
  });
  return {
    ca: () => ca,
    /** Listens with `handle`; the URL it listens at. */
    async listen(handle: RequestListener): Promise<string> {
      server = https.createServer(tls, handle);
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
  };
}
