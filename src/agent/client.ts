import { request } from 'node:https';
import type { Readable } from 'node:stream';
import { stallGuard } from '../lib/stall-guard.js';
import type { AgentUnit } from '../provisioning/agent-units.js';
import type { Identity } from './state.js';

/** The listener's answers, each with the members of its route; a problem's `detail` when refused. */
export interface AgentAnswer {
  detail?: string;
  code?: string;
  server_id?: string;
  certificate_pem?: string;
  known?: string;
  units?: AgentUnit[];
}

export interface AgentResponse {
  status: number;
  body: AgentAnswer | undefined;
  text: string;
  /** The state tag a report answers with (`berth-known`): what the next poll knows. */
  known?: string;
}

/** TLS material of one call: the CA to trust, and the client certificate once there is one. */
export type Credentials = Pick<Identity, 'ca_pem'> & Partial<Pick<Identity, 'key_pem' | 'certificate_pem'>>;

/**
 * One call to the agent listener over HTTPS, trusting only `ca_pem` (never the system's CAs),
 * with the agent's client certificate when it has one. `signal` ends a long-poll on shutdown.
 */
export function agentCall(
  url: string,
  creds: Credentials,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  options: { headers?: Record<string, string>; signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<AgentResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, url),
      {
        method,
        ca: creds.ca_pem,
        key: creds.key_pem,
        cert: creds.certificate_pem,
        signal: options.signal,
        timeout: options.timeoutMs ?? 60_000,
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: AgentAnswer | undefined;
          try {
            parsed = text ? (JSON.parse(text) as AgentAnswer) : undefined;
          } catch {
            parsed = undefined;
          }
          const known = res.headers['berth-known'];
          resolve({ status: res.statusCode ?? 0, body: parsed, text, known: typeof known === 'string' ? known : undefined });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in time`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** A refused transfer's error: the status and the problem's detail. */
const refusal = (path: string, status: number | undefined, chunks: Buffer[]) => {
  const text = Buffer.concat(chunks).toString('utf8');
  const detail = (() => {
    try {
      return (JSON.parse(text) as { detail?: unknown }).detail;
    } catch {
      return undefined;
    }
  })();
  return new Error(`${path}: ${status} ${(typeof detail === 'string' ? detail : text).slice(0, 500)}`);
};

/**
 * A GET whose answer is streamed (an artifact): the response's body once it is a 200, else an
 * error with the problem's detail. The body fails when the control plane sends nothing for
 * `idleMs` while it is read, not while its reader holds bytes back (a dump's load, an unpack).
 */
export function agentDownload(
  url: string,
  creds: Credentials,
  path: string,
  o: { signal?: AbortSignal; idleMs?: number } = {},
): Promise<Readable> {
  const idleMs = o.idleMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, url),
      { method: 'GET', ca: creds.ca_pem, key: creds.key_pem, cert: creds.certificate_pem, signal: o.signal, timeout: idleMs },
      (res) => {
        if (res.statusCode === 200) {
          req.setTimeout(0);
          return resolve(stallGuard(res, idleMs, `${path} from ${url}`));
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => reject(refusal(path, res.statusCode, chunks)));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in time`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * A PUT whose body is streamed (a task's output); resolves once the listener stored it (204).
 * It fails when the control plane takes no bytes for `idleMs` while the body has some to send,
 * or gives no answer for as long once all are sent. The clock stops while the body's maker has
 * nothing yet: a socket's idle timeout also ran then, and so failed a dump waiting on a lock.
 */
export function agentUpload(
  url: string,
  creds: Credentials,
  path: string,
  body: Readable,
  o: { idleMs?: number } = {},
): Promise<void> {
  const idleMs = o.idleMs ?? 60_000;
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = () => clearTimeout(timer);
    const arm = (what: string) => {
      stop();
      timer = setTimeout(() => req.destroy(new Error(`${path} to ${url}: ${what} for ${idleMs / 1000} s`)), idleMs);
    };
    const req = request(
      new URL(path, url),
      {
        method: 'PUT',
        ca: creds.ca_pem,
        key: creds.key_pem,
        cert: creds.certificate_pem,
        headers: { 'content-type': 'application/octet-stream' },
        // A connection of its own: one refused mid-body (413) is closed, never pooled for the next call.
        agent: false,
      },
      (res) => {
        stop();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          stop(); // a refusal may come while bytes are still sent
          if (res.statusCode === 204) return resolve();
          body.destroy();
          req.destroy();
          reject(refusal(path, res.statusCode, chunks));
        });
      },
    );
    req.on('error', (err) => {
      stop();
      // The body's maker learns it too: a dump writing into it would wait on a full pipe, holding
      // its transaction (and the locks a DROP DATABASE waits for) until its server times it out.
      body.destroy(err);
      reject(err);
    });
    body.on('error', (err) => req.destroy(err));
    body.on('data', (chunk: Buffer) => {
      if (req.write(chunk)) return;
      body.pause();
      arm('took no bytes');
    });
    req.on('drain', () => {
      stop();
      body.resume();
    });
    body.on('end', () => {
      req.end();
      arm('no answer');
    });
  });
}
