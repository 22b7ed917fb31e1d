import { generateKeyPairSync } from 'node:crypto';

const sshString = (value: Buffer | string) => {
  const bytes = Buffer.from(value);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
};

/** A new Ed25519 public key as one OpenSSH line (`ssh-ed25519 AAAA... comment`). */
export function ed25519KeyLine(comment = 'me@laptop'): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const blob = Buffer.concat([sshString('ssh-ed25519'), sshString(raw)]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}
