import { hash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 34;
const CHECKSUM_LENGTH = 6;
const TOKEN_PREFIX = 'berth_';
const TOKEN_PATTERN = /^berth_[0-9A-Za-z]{40}$/;

function toBase62(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

const checksum = (body: string): string => toBase62(crc32(body), CHECKSUM_LENGTH);

/** `berth_` + 34 random base62 characters + a 6-character CRC32 checksum of them. */
export function generateTokenSecret(): string {
  let body = '';
  for (let i = 0; i < BODY_LENGTH; i++) body += BASE62[randomInt(62)];
  return TOKEN_PREFIX + body + checksum(body);
}

/** Cheap offline check: rejects typos and foreign strings without touching the database. */
export function hasValidFormat(secret: string): boolean {
  if (!TOKEN_PATTERN.test(secret)) return false;
  const body = secret.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + BODY_LENGTH);
  return secret.slice(-CHECKSUM_LENGTH) === checksum(body);
}

/** A token is a 200-bit random secret, so one SHA-256 is a sufficient hash at rest. */
export const hashSecret = (secret: string): string => hash('sha256', secret, 'hex');

export const displayPrefix = (secret: string): string => secret.slice(0, 12);
