/**
 * Buffers a finished backup left, by length, for the next: a backup allocates its blocks, output
 * buffer and read-ahead heads once per process, not once per backup (each set lived long enough
 * to reach the old generation, and waited there for a full collection).
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
