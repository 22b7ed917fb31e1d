import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** What the receiver answers: a status (and body), or `hang` to never answer. */
type Behaviour = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

/** A real HTTP server on loopback standing in for a customer's webhook consumer. */
export interface Receiver {
  /** The receiver's URL; `host` names it (a name the test resolves to 127.0.0.1). */
  url: (path?: string, host?: string) => string;
  received: Received[];
  /** Requests being answered right now, and the most seen at once. */
  inFlight: () => number;
  maxInFlight: () => number;
  behave: (b: Behaviour | ((r: Received) => Behaviour)) => void;
  /** Answers every hanging request with 200 and stops hanging. */
  release: () => void;
  close: () => Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let behaviour: Behaviour | ((r: Received) => Behaviour) = { status: 200 };
  let inFlight = 0;
  let maxInFlight = 0;
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on('close', () => inFlight--);
      const b = typeof behaviour === 'function' ? behaviour(r) : behaviour;
      if (b === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(b.status, b.headers).end(b.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path = '/hook', host = '127.0.0.1') => `http://${host}:${port}${path}`,
    received,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    behave: (b) => (behaviour = b),
    release: () => {
      behaviour = { status: 200 };
      for (const res of hanging) res.writeHead(200).end('ok');
      hanging.clear();
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
