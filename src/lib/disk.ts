import { statfs } from 'node:fs/promises';

/** Bytes in use on the file system that holds `dir` (0 while it does not exist yet). */
export async function bytesUsedUnder(dir: string): Promise<number> {
  try {
    const s = await statfs(dir);
    return (s.blocks - s.bfree) * s.bsize;
  } catch {
    return 0;
  }
}
