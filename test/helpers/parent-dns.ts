import dgram from 'node:dgram';

/** A DS record as a parent zone publishes it. */
export interface ParentDsRecord {
  key_tag: number;
  algorithm: number;
  digest_type: number;
  digest: string;
  /** The TTL it is answered with: 3,600 s unless given. */
  ttl?: number;
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

/**
 * Plays a signed zone's parent: a UDP server on 127.0.0.1 that answers DS queries with what
 * `published` holds for the name (zone name → its DS), and no record otherwise. BERTH_DNSSEC_RESOLVER
 * names it (`address`).
 */
export async function parentDnsServer() {
  const published = new Map<string, ParentDsRecord>();
  const socket = dgram.createSocket('udp4');
  socket.on('message', (q: Buffer, from) => {
    const labels: string[] = [];
    let at = 12;
    for (let len = q.readUInt8(at); len > 0; len = q.readUInt8(at)) {
      labels.push(q.subarray(at + 1, at + 1 + len).toString('ascii'));
      at += len + 1;
    }
    const question = q.subarray(12, at + 5);
    const ds = published.get(labels.join('.').toLowerCase());
    // QR and AA set, the question repeated, the DS (its owner a pointer to the question's name) if any.
    const header = Buffer.from([q[0] as number, q[1] as number, 0x84, 0, 0, 1, 0, ds ? 1 : 0, 0, 0, 0, 0]);
    let answer = Buffer.alloc(0);
    if (ds) {
      const rdata = Buffer.concat([
        Buffer.from([ds.key_tag >> 8, ds.key_tag & 0xff, ds.algorithm, ds.digest_type]),
        Buffer.from(ds.digest, 'hex'),
      ]);
      answer = Buffer.concat([
        Buffer.from([0xc0, 12, 0, 43, 0, 1]),
        u32(ds.ttl ?? 3600),
        Buffer.from([rdata.length >> 8, rdata.length & 0xff]),
        rdata,
      ]);
    }
    socket.send(Buffer.concat([header, question, answer]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    published,
    address: `127.0.0.1:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
