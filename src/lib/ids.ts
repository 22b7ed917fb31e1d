import { randomFillSync } from 'node:crypto';

/** TypeID prefixes. */
export type IdPrefix =
  | 'acc'
  | 'pln'
  | 'rsl'
  | 'dom'
  | 'rec'
  | 'chg'
  | 'eml'
  | 'fwd'
  | 'db'
  | 'dbu'
  | 'site'
  | 'dpl'
  | 'bak'
  | 'bks'
  | 'op'
  | 'evt'
  | 'whk'
  | 'whd'
  | 'tok'
  | 'req'
  | 'srv'
  | 'tsk'
  | 'cjb'
  | 'crn'
  | 'ssk'
  | 'mov'
  | 'dnk';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const bytes = new Uint8Array(16);
const pool = new Uint8Array(4096);
let poolAt = pool.length;
let lastMs = 0;
let counter = 0;

/** Random bytes from a pool refilled 4 KiB at a time: one system call per 400 ids, not per id. */
function randomInto(target: Uint8Array, from: number, to: number): void {
  if (poolAt + (to - from) > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  for (let i = from; i < to; i++) target[i] = pool[poolAt++] as number;
}

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then a 31-bit counter (12 bits in rand_a,
 * 19 at the top of rand_b; RFC 9562 §6.2 method 1) seeded at random each millisecond and
 * incremented within it, so ids made in one process sort in the order they were made (keyset
 * pages list a batch as it was written), then 43 random bits.
 */
function uuidv7(): Uint8Array {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    randomInto(bytes, 12, 16);
    // Seeded below 2^30, so a millisecond holds at least 2^30 ids before it borrows the next.
    counter =
      (((bytes[12] as number) & 0x3f) << 24) |
      ((bytes[13] as number) << 16) |
      ((bytes[14] as number) << 8) |
      (bytes[15] as number);
  } else if (++counter > 0x7fffffff) {
    counter = 0;
    lastMs++;
  }
  const ms = lastMs;
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff;
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff;
  bytes[2] = (ms >>> 24) & 0xff;
  bytes[3] = (ms >>> 16) & 0xff;
  bytes[4] = (ms >>> 8) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | ((counter >>> 27) & 0x0f);
  bytes[7] = (counter >>> 19) & 0xff;
  bytes[8] = 0x80 | ((counter >>> 13) & 0x3f);
  bytes[9] = (counter >>> 5) & 0xff;
  randomInto(bytes, 10, 16);
  bytes[10] = (((counter & 0x1f) << 3) | ((bytes[10] as number) & 0x07)) & 0xff;
  return bytes;
}

/** TypeID's suffix: the 128 bits in Crockford base32, most significant first (26 characters, the first 0-7). */
function base32(b: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 2; // 130 bits of output for 128 of input: two leading zero bits.
  for (let i = 0; i < 16; i++) {
    acc = ((acc << 8) | (b[i] as number)) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >>> bits) & 31];
    }
  }
  return out;
}

/**
 * A new TypeID. Written here rather than through typeid-js, which validates what it has just
 * made (a 10,000-record sync spent 15-30 ms making ids; this is a fifth of that).
 */
export const newId = (prefix: IdPrefix): string => `${prefix}_${base32(uuidv7())}`;

/** The 26-character suffix: a UUIDv7 in Crockford base32, first character 0-7. */
const ID_SUFFIX_PATTERN = '[0-7][0-9a-hjkmnp-tv-z]{25}';

export const idPattern = (prefix: IdPrefix): string => `^${prefix}_${ID_SUFFIX_PATTERN}$`;

export const isId = (prefix: IdPrefix, value: string): boolean => new RegExp(idPattern(prefix)).test(value);
