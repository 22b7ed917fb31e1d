/**
 * AGENTS simulated idle agents: each holds a long-poll open to the agent listener at AGENT_URL
 * (mutual TLS, the certificate of AGENT_IDENTITY), as an agent with nothing to apply does, and
 * polls again when it is answered. Prints `waiting` once every poll has been accepted.
 */
import { Agent, request } from 'node:https';

const url = process.env.AGENT_URL as string;
const identity = JSON.parse(process.env.AGENT_IDENTITY as string) as { ca_pem: string; key_pem: string; certificate_pem: string };
const count = Number(process.env.AGENTS ?? 1000);
// One connection per simulated agent, as 1,000 machines would hold.
const agent = new Agent({
  keepAlive: true,
  maxSockets: count,
  ca: identity.ca_pem,
  key: identity.key_pem,
  cert: identity.certificate_pem,
});

let known = '';
let accepted = 0;
function poll(first: boolean): void {
  const req = request(
    new URL(`/agent/v1/units?wait=30&known=${known}`, url),
    { agent, headers: { 'berth-agent-version': 'idle' } },
    (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += String(c)));
      res.on('end', () => {
        known = (JSON.parse(body) as { known?: string }).known ?? known;
        poll(false);
      });
    },
  );
  // Connected (a new connection, or one the first poll opened): the listener holds it until
  // something changes or 30 s pass.
  req.on('socket', (socket) => {
    const counted = () => first && ++accepted === count && console.log('waiting');
    if (socket.connecting) socket.once('secureConnect', counted);
    else counted();
  });
  req.on('error', () => setTimeout(() => poll(first), 1000));
  req.end();
}

// The first poll learns the state tag, so every later one waits.
const first = request(new URL('/agent/v1/units?wait=0', url), { agent }, (res) => {
  let body = '';
  res.on('data', (c: Buffer) => (body += String(c)));
  res.on('end', () => {
    known = (JSON.parse(body) as { known?: string }).known ?? '';
    for (let i = 0; i < count; i++) poll(true);
  });
});
first.end();
