import { createHash, createPublicKey } from 'node:crypto';

/**
 * An OpenSSH public key line (`authorized_keys` without options: `type base64 [comment]`),
 * checked the way sshd would read it and stricter: the blob is decoded, its inner type must be
 * the outer one, an ECDSA key's curve must be the type's and its point on that curve, RSA must
 * have at least 3072 bits. DSA and anything else are refused. The fingerprint is what
 * `ssh-keygen -lf -E sha256` prints.
 */
export interface SshPublicKey {
  type: KeyType;
  bits: number;
  /** `SHA256:` and the unpadded base64 of the blob's SHA-256. */
  fingerprint_sha256: string;
  comment: string | null;
  /** `type base64`, the comment left out: what the key files hold. */
  key: string;
}

const SSH_KEY_TYPES = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
] as const;
type KeyType = (typeof SSH_KEY_TYPES)[number];

/** Why a key is refused: the code a field error carries, and its detail. */
export class SshKeyRefused extends Error {
  constructor(
    readonly code: 'invalid_public_key' | 'key_type_not_allowed' | 'key_too_small',
    message: string,
  ) {
    super(message);
  }
}

const MAX_KEY_LINE = 16 * 1024;
const MIN_RSA_BITS = 3072;
const CURVES = { nistp256: ['P-256', 32], nistp384: ['P-384', 48], nistp521: ['P-521', 66] } as const;
type Curve = keyof typeof CURVES;

const refuse = (message: string): never => {
  throw new SshKeyRefused('invalid_public_key', message);
};

/** The SSH wire encoding's `string`s and `mpint`s, read in order; anything left over is refused. */
class WireReader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  bytes(): Buffer {
    if (this.at + 4 > this.buf.length) refuse('the key data ends too early');
    const length = this.buf.readUInt32BE(this.at);
    if (this.at + 4 + length > this.buf.length) refuse('the key data ends too early');
    const value = this.buf.subarray(this.at + 4, this.at + 4 + length);
    this.at += 4 + length;
    return value;
  }
  text(): string {
    return this.bytes().toString('latin1');
  }
  end(): void {
    if (this.at !== this.buf.length) refuse('the key data has bytes after the key');
  }
}

const b64url = (b: Buffer) => b.toString('base64url');

/** An uncompressed point on `curve`: Node refuses one that is not on it. */
function checkPoint(curve: Curve, point: Buffer): void {
  const [crv, size] = CURVES[curve];
  if (point.length !== 1 + 2 * size || point[0] !== 4) refuse(`the ECDSA point is not an uncompressed ${curve} point`);
  try {
    createPublicKey({
      key: { kty: 'EC', crv, x: b64url(point.subarray(1, 1 + size)), y: b64url(point.subarray(1 + size)) },
      format: 'jwk',
    });
  } catch {
    refuse(`the ECDSA point is not on ${curve}`);
  }
}

function checkEd25519(pk: Buffer): void {
  if (pk.length !== 32) refuse('an Ed25519 key has 32 bytes');
}

/** The significant bits of an mpint (big-endian, a leading zero byte keeps it positive). */
function mpintBits(n: Buffer): number {
  let i = 0;
  while (i < n.length && n[i] === 0) i++;
  if (i === n.length) return 0;
  return (n.length - i - 1) * 8 + (32 - Math.clz32(n[i] as number));
}

/** The key's size in bits, once its blob has been read to the end and found sound. */
function readBlob(type: KeyType, wire: WireReader): number {
  const inner = wire.text();
  if (inner !== type) refuse(`the key data says ${JSON.stringify(inner.slice(0, 60))}, not ${type}`);
  let bits: number;
  if (type === 'ssh-ed25519' || type === 'sk-ssh-ed25519@openssh.com') {
    checkEd25519(wire.bytes());
    bits = 256;
  } else if (type === 'ssh-rsa') {
    const e = wire.bytes();
    bits = mpintBits(wire.bytes());
    if (mpintBits(e) < 2) refuse('the RSA exponent is not valid');
  } else {
    const curve = type === 'sk-ecdsa-sha2-nistp256@openssh.com' ? 'nistp256' : (type.slice('ecdsa-sha2-'.length) as Curve);
    const named = wire.text();
    if (named !== curve) refuse(`the key's curve is ${JSON.stringify(named.slice(0, 20))}, not ${curve} as its type says`);
    checkPoint(curve, wire.bytes());
    bits = { nistp256: 256, nistp384: 384, nistp521: 521 }[curve];
  }
  // Security keys name the application they were made for (`ssh:` by default).
  if (type.startsWith('sk-') && !wire.text().startsWith('ssh:')) refuse('a security key is for an application other than ssh:');
  wire.end();
  return bits;
}

export function parseSshPublicKey(line: string): SshPublicKey {
  if (Buffer.byteLength(line) > MAX_KEY_LINE) refuse(`a key line is at most ${MAX_KEY_LINE} bytes`);
  const trimmed = line.replace(/\r?\n$/, '').trim();
  // Tabs separate fields for sshd; every other control character, a newline within included, is refused.
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(trimmed)) refuse('a key is one line without control characters');
  const [type = '', data = '', ...rest] = trimmed.split(/[ \t]+/);
  if (!(SSH_KEY_TYPES as readonly string[]).includes(type)) {
    if (type === 'ssh-dss') throw new SshKeyRefused('key_type_not_allowed', 'DSA keys are not accepted: use Ed25519');
    if (/^(ssh|ecdsa|sk)-/.test(type) || /^[a-z0-9-]+@/.test(type))
      throw new SshKeyRefused('key_type_not_allowed', `${type.slice(0, 60)} keys are not accepted`);
    refuse('a key starts with its type (ssh-ed25519 AAAA...): options such as from= or command= are not accepted');
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data) || data.length % 4 !== 0) refuse('the key data is not base64');
  const blob = Buffer.from(data, 'base64');
  const bits = readBlob(type as KeyType, new WireReader(blob));
  if (type === 'ssh-rsa' && bits < MIN_RSA_BITS)
    throw new SshKeyRefused('key_too_small', `an RSA key has at least ${MIN_RSA_BITS} bits; this one has ${bits}`);
  const comment = rest.join(' ');
  return {
    type: type as KeyType,
    bits,
    fingerprint_sha256: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`,
    comment: comment || null,
    key: `${type} ${data}`,
  };
}
