import { randomBytes } from 'node:crypto';
import { open, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';

/**
 * Replaces a file so that readers see the old bytes or the new, never a mixture: write a
 * temporary file beside it, fsync, rename over the target (atomic on POSIX).
 *
 * The new file's modification time is always a later whole second than the old one's: readers
 * that notice a change by mtime in seconds and size (Dovecot's passwd-file) would otherwise miss
 * a rewrite of the same size within the same second — a changed password hash has the same
 * length, and the old password kept working until the next change.
 */
export async function writeFileAtomic(file: string, content: string, mode = 0o644): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const previous = await stat(file).catch(() => null);
  const handle = await open(tmp, 'w', mode);
  let writtenSecond: number;
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
    writtenSecond = Math.floor((await handle.stat()).mtimeMs / 1000);
  } finally {
    await handle.close();
  }
  // The file system's clock is coarse and may still be in the previous second when Date.now()
  // has passed it, so the written file's own mtime is what is compared.
  const previousSecond = previous ? Math.floor(previous.mtimeMs / 1000) : -1;
  if (previousSecond >= writtenSecond) {
    const later = new Date((previousSecond + 1) * 1000);
    await utimes(tmp, later, later);
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
