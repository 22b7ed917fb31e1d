import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { type Ds, canonicalName } from '../../../lib/dnssec/ds.js';

const DS = 43;

/** Skips a (possibly compressed) name at `at`; the offset after it. */
function skipName(msg: Buffer, at: number): number {
  for (;;) {
    const len = msg.readUInt8(at);
    if (len === 0) return at + 1;
    if ((len & 0xc0) === 0xc0) return at + 2;
    at += len + 1;
  }
}

/** A DS record as the parent publishes it (any digest type), and the TTL (seconds) it was answered with. */
export type ParentDs = Omit<Ds, 'digest_type'> & { digest_type: number; ttl: number };

/** The DS records in a DNS answer to a DS query. */
function dsInAnswer(msg: Buffer): ParentDs[] {
  const answers = msg.readUInt16BE(6);
  let at = skipName(msg, 12) + 4;
  const found: ParentDs[] = [];
  for (let i = 0; i < answers; i++) {
    at = skipName(msg, at);
    const type = msg.readUInt16BE(at);
    const ttl = msg.readUInt32BE(at + 4);
    const length = msg.readUInt16BE(at + 8);
    const rdata = msg.subarray(at + 10, at + 10 + length);
    at += 10 + length;
    if (type !== DS || rdata.length < 5) continue;
    found.push({
      key_tag: rdata.readUInt16BE(0),
      algorithm: rdata.readUInt8(2),
      digest_type: rdata.readUInt8(3),
      digest: rdata.subarray(4).toString('hex').toUpperCase(),
      // A TTL with its top bit set counts as 0 (RFC 2181, 8).
      ttl: ttl > 0x7fffffff ? 0 : ttl,
    });
  }
  return found;
}

/**
 * The DS records published for `zone` at its parent, as the resolver at `host:port` answers
 * (recursion desired: a resolver finds the parent's servers; an authoritative server of the
 * parent answers itself). Asked again once if no answer comes; a name error is no DS.
 */
export async function parentDs(zone: string, host: string, port: number, timeoutMs = 3000): Promise<ParentDs[]> {
  const id = randomInt(0, 0xffff);
  const query = Buffer.concat([
    Buffer.from([id >> 8, id & 0xff, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
    canonicalName(zone),
    Buffer.from([0, DS, 0, 1]),
  ]);
  for (let attempt = 0; ; attempt++) {
    const answer = await new Promise<Buffer | null>((resolve) => {
      const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
      const done = (v: Buffer | null) => {
        clearTimeout(timer);
        socket.close();
        resolve(v);
      };
      const timer = setTimeout(() => done(null), timeoutMs);
      socket.on('message', (m: Buffer) => m.length >= 12 && m.readUInt16BE(0) === id && done(m));
      socket.on('error', () => done(null));
      socket.send(query, port, host);
    });
    if (answer) {
      const rcode = answer.readUInt8(3) & 0x0f;
      if (rcode === 3 || rcode === 0) return dsInAnswer(answer);
      throw new Error(`the resolver answered the DS query with RCODE ${rcode}`);
    }
    if (attempt === 1) throw new Error(`no answer to the DS query from ${host}:${port}`);
  }
}
