import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import argon2 from 'argon2';

/**
 * Mailbox passwords, stored as Dovecot's `{ARGON2ID}` scheme so the real mail server verifies
 * them without ever seeing the password. The hash runs in libuv's thread pool (argon2 is a
 * native addon with an async API), so it never blocks the event loop.
 */
export interface MailHashCost {
  /** Memory in KiB (argon2 `m`). */
  memoryKib: number;
  /** Passes (argon2 `t`). */
  timeCost: number;
}

/** OWASP's argon2id minimum: 19 MiB, 2 passes, 1 lane. */
export const DEFAULT_MAIL_HASH_COST: MailHashCost = { memoryKib: 19_456, timeCost: 2 };

const SCHEME = '{ARGON2ID}';
const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');

/**
 * The PHC string in the order libsodium (Dovecot's verifier) requires: `m`, `t`, `p`. The
 * argon2 package sorts the parameters alphabetically (`m,p,t`), which Dovecot rejects, so the
 * string is encoded here from the raw hash. One lane: libsodium verifies only `p=1`.
 */
export async function hashMailPassword(password: string, cost: MailHashCost, salt = randomBytes(16)): Promise<string> {
  const hash = await argon2.hash(password, {
    type: argon2.argon2id,
    raw: true,
    salt,
    memoryCost: cost.memoryKib,
    timeCost: cost.timeCost,
    parallelism: 1,
    hashLength: 32,
  });
  return `${SCHEME}$argon2id$v=19$m=${cost.memoryKib},t=${cost.timeCost},p=1$${b64(salt)}$${b64(hash)}`;
}

const PHC = /^\{ARGON2ID\}\$argon2id\$v=19\$m=(\d+),t=(\d+),p=1\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** Verifies a password against a stored `{ARGON2ID}` hash (as Dovecot would). */
export async function verifyMailPassword(stored: string, password: string): Promise<boolean> {
  const m = PHC.exec(stored);
  if (!m) return false;
  const expected = Buffer.from(m[4] as string, 'base64');
  const actual = await argon2.hash(password, {
    type: argon2.argon2id,
    raw: true,
    salt: Buffer.from(m[3] as string, 'base64'),
    memoryCost: Number(m[1]),
    timeCost: Number(m[2]),
    parallelism: 1,
    hashLength: expected.length,
  });
  return timingSafeEqual(actual, expected);
}

// No look-alikes (0/O, 1/l/I), so a password read aloud or retyped survives.
const ALPHABET = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A generated password: 24 characters, about 139 bits. */
export function generateMailPassword(): string {
  let out = '';
  for (let i = 0; i < 24; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}
