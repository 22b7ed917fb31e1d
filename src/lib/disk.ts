import { lstat, readdir, statfs } from 'node:fs/promises';
import path from 'node:path';

/** Bytes in use on the file system that holds `dir` (0 while it does not exist yet). */
export async function bytesUsedUnder(dir: string): Promise<number> {
  try {
    const s = await statfs(dir);
    return (s.blocks - s.bfree) * s.bsize;
  } catch {
    return 0;
  }
}

/** Bytes of every regular file under dir (symlinks are not followed), less the top-level entries `skip` names. */
export async function directoryBytes(dir: string, skip: string[] = []): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let total = 0;
  for (const e of entries) {
    if (skip.includes(e.name)) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) total += await directoryBytes(full);
    else if (e.isFile()) total += (await lstat(full)).size;
  }
  return total;
}
