/**
 * `each` of `items`, a slice at a time: a file system call is a round trip to libuv's thread
 * pool, so calls made one after another wait in turn (5,120 lstats in a row took half a second
 * of a 500 MB backup), and a directory of 100,000 names at once would hold as many promises.
 */
export async function inSlices<T>(items: readonly T[], each: (item: T) => Promise<unknown>, size = 64): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}
