import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Where archives live. Local by default; an S3-compatible store can implement the same. */
export interface BackupStorage {
  /**
   * Stores a stream under `key`, returning its size and SHA-256. Nothing is visible under the
   * key until the whole stream is stored, so a crash never leaves a half archive behind it.
   */
  put(key: string, body: Readable): Promise<{ size: number; sha256: string }>;
  /** The stored bytes from `start` to `end` inclusive (the whole object by default). */
  read(key: string, range?: { start: number; end: number }): Readable;
  size(key: string): Promise<number | null>;
  remove(key: string): Promise<void>;
}

/** Counts and hashes what passes through. */
export function digestingStream() {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, result: () => ({ size, sha256: hash.digest('hex') }) };
}

/** A directory (`BERTH_DATA_DIR/backups` by default): `<key>.partial` renamed when complete. */
export class LocalBackupStorage implements BackupStorage {
  constructor(private readonly dir: string) {}

  private file(key: string): string {
    if (!/^[a-z0-9_]+$/.test(key)) throw new Error(`invalid backup storage key ${key}`);
    return path.join(this.dir, `${key}.tar.gz`);
  }

  async put(key: string, body: Readable): Promise<{ size: number; sha256: string }> {
    await mkdir(this.dir, { recursive: true });
    const final = this.file(key);
    const partial = `${final}.partial`;
    const digest = digestingStream();
    try {
      await pipeline(body, digest.stream, createWriteStream(partial, { mode: 0o600 }));
      // On disk before it is renamed into place (and before the backup is marked completed).
      const handle = await open(partial, 'r+');
      await handle.sync().finally(() => handle.close());
      await rename(partial, final);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return digest.result();
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.file(key), range ?? {});
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.file(key))).size;
    } catch {
      return null;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
    await rm(`${this.file(key)}.partial`, { force: true });
  }
}
