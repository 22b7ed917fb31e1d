/**
 * Buffers a finished backup or unpacking left, by length, for the next: the gzip blocks, output
 * buffer and read-ahead heads of a backup, the batches of the file writer, allocated once per
 * process rather than once per archive (each set lived long enough to reach the old generation,
 * and waited there for a full collection; each fresh megabyte came in fresh pages).
 */
const spares = new Map<number, Buffer[]>();
const KEPT_PER_LENGTH = 16;

/** A buffer of `bytes`, a kept one if there is one (its contents are old: overwrite them). */
export const take = (bytes: number): Buffer => spares.get(bytes)?.pop() ?? Buffer.allocUnsafeSlow(bytes);

/** Gives buffers back for the next `take` of their length. */
export const keep = (buffers: Buffer[]): void => {
  for (const b of buffers) {
    const list = spares.get(b.length) ?? spares.set(b.length, []).get(b.length)!;
    if (list.length < KEPT_PER_LENGTH) list.push(b);
  }
};
