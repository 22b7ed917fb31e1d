import { open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Replaces a file so that readers see the old bytes or the new, never a mixture: write a
 * temporary file beside it, fsync, rename over the target (atomic on POSIX).
 */
export async function writeFileAtomic(file: string, content: string, mode = 0o644): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(tmp, 'w', mode);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** Rewrites the file only when its content differs (a re-applied unit touches nothing). */
export async function writeFileIfChanged(file: string, content: string, mode = 0o644): Promise<void> {
  if ((await readFile(file, 'utf8').catch(() => null)) !== content) await writeFileAtomic(file, content, mode);
}
