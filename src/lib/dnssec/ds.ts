import { createHash } from 'node:crypto';

/** A zone's signing key as its DNSKEY record publishes it. */
export interface Dnskey {
  /** 257 for a key-signing key (SEP bit set), 256 for a zone-signing key. */
  flags: number;
  /** DNSSEC algorithm number: 13 ECDSAP256SHA256, 15 ED25519, 8 RSASHA256. */
  algorithm: number;
  /** The public key field, base64 as in the presentation format. */
  publicKey: string;
}

/** The DS record a parent publishes for a DNSKEY, with SHA-256 (digest type 2, RFC 4509). */
export interface Ds {
  key_tag: number;
  algorithm: number;
  digest_type: 2;
  /** Hex, upper case, as registrars and `dnssec-dsfromkey` show it. */
  digest: string;
}

/** DNSKEY RDATA in wire form (RFC 4034 §2.1): flags, protocol (always 3), algorithm, public key. */
function dnskeyRdata(key: Dnskey): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(key.flags, 0);
  head.writeUInt8(3, 2);
  head.writeUInt8(key.algorithm, 3);
  return Buffer.concat([head, Buffer.from(key.publicKey, 'base64')]);
}

/**
 * The key tag of a DNSKEY (RFC 4034 appendix B): the RDATA summed as 16-bit words, the carry
 * folded in once. Algorithm 1 (RSA/MD5), which tags differently, is never used here.
 */
function keyTag(rdata: Buffer): number {
  let sum = 0;
  for (let i = 0; i < rdata.length; i++) sum += i & 1 ? (rdata[i] as number) : (rdata[i] as number) << 8;
  sum += (sum >> 16) & 0xffff;
  return sum & 0xffff;
}

/** An owner name in canonical wire form (RFC 4034 §6.2): lower case, length-prefixed labels, the root. */
export function canonicalName(name: string): Buffer {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.').filter(Boolean);
  const parts = labels.map((label) => {
    const bytes = Buffer.from(label, 'ascii');
    if (bytes.length > 63) throw new Error(`the label "${label}" is longer than 63 octets`);
    return Buffer.concat([Buffer.from([bytes.length]), bytes]);
  });
  return Buffer.concat([...parts, Buffer.from([0])]);
}

/** The DS of `owner`'s DNSKEY: SHA-256 over the owner name and the DNSKEY RDATA (RFC 4034 §5.1.4, RFC 4509). */
export function dsOf(owner: string, key: Dnskey): Ds {
  const rdata = dnskeyRdata(key);
  const digest = createHash('sha256').update(canonicalName(owner)).update(rdata).digest('hex').toUpperCase();
  return { key_tag: keyTag(rdata), algorithm: key.algorithm, digest_type: 2, digest };
}

/** The DS record's content in presentation format: `<key tag> <algorithm> <digest type> <digest>`. */
export const dsContent = (ds: Ds) => `${ds.key_tag} ${ds.algorithm} ${ds.digest_type} ${ds.digest}`;
