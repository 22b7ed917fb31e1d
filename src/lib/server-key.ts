import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const decode = (text: string): Buffer => Buffer.from(text.trim(), /^[0-9a-fA-F]{64}$/.test(text.trim()) ? 'hex' : 'base64');

/**
 * The server's master key, which seals secrets the service must read back (webhook signing
 * secrets). BERTH_SECRET_KEY when set, which every process sharing a database needs; otherwise
 * a key generated into the data directory on first start (mode 0600), so a database dump alone
 * reveals no secret.
 */
export function loadServerKey(configured: string | null, dataDir: string): Buffer {
  if (configured) return decode(configured);
  const file = path.join(dataDir, 'secret.key');
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = decode(readFileSync(file, 'utf8'));
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key`);
  return key;
}

/** A key for one purpose, so no two uses share key material. */
export const subkey = (master: Buffer, purpose: string): Buffer =>
  Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `berth ${purpose}`, 32));
