/** What the tar reader and the tar writer share of the format (POSIX ustar). */

export const BLOCK = 512;

/** Zeros from the end of `size` bytes of data to the next block. */
export const tarPadding = (size: number): number => (BLOCK - (size % BLOCK)) % BLOCK;

/** The checksum field counts as eight spaces in its own sum. */
export const CHECKSUM_FIELD_AS_SPACES = 8 * 0x20;

/** A header's bytes added up, the checksum field counted as spaces. */
export function headerChecksum(h: Buffer): number {
  let sum = CHECKSUM_FIELD_AS_SPACES;
  for (let i = 0; i < 148; i++) sum += h[i] as number;
  for (let i = 156; i < BLOCK; i++) sum += h[i] as number;
  return sum;
}
