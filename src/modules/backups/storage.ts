import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';

/** An archive written in full but not yet visible under its key. */
export interface StagedArchive {
  size: number;
  sha256: string;
  /** Makes it the object under its key (atomically replacing any other). */
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/** Where archives live. Local by default; an S3-compatible store can implement the same. */
export interface BackupStorage {
  /**
   * Stores `body` in full, returning its size and SHA-256; nothing is visible under `key`
   * until `commit`, so a crash never leaves a half archive behind it, and of two runs only
   * the one that commits is seen. A chunk of `body` may be reused once the next is asked for
   * (packArchive's are): it is written or copied before that, never kept.
   */
  put(key: string, body: AsyncIterable<Uint8Array>): Promise<StagedArchive>;
  /** The stored bytes from `start` to `end` inclusive (the whole object by default). */
  read(key: string, range?: { start: number; end: number }): Readable;
  size(key: string): Promise<number | null>;
  /** The object and anything a run left staged under its key. */
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

/** A directory (`BERTH_DATA_DIR/backups` by default): `<key>.tar.gz`, staged as `<key>.tar.gz.<run>.partial`. */
export class LocalBackupStorage implements BackupStorage {
  constructor(private readonly dir: string) {}

  private file(key: string): string {
    if (!/^[a-z0-9_]+$/.test(key)) throw new Error(`invalid backup storage key ${key}`);
    return path.join(this.dir, `${key}.tar.gz`);
  }

  async put(key: string, body: AsyncIterable<Uint8Array>): Promise<StagedArchive> {
    await mkdir(this.dir, { recursive: true });
    const final = this.file(key);
    // Each run writes its own file: two runs of one backup never write into each other.
    const partial = `${final}.${randomBytes(6).toString('hex')}.partial`;
    const hash = createHash('sha256');
    let size = 0;
    try {
      const handle = await open(partial, 'wx', 0o600);
      try {
        for await (const chunk of body) {
          hash.update(chunk);
          size += chunk.length;
          for (let at = 0; at < chunk.length;) at += (await handle.write(chunk, at)).bytesWritten;
        }
        await handle.sync(); // on disk before it can be renamed into place
      } finally {
        await handle.close();
      }
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return {
      size,
      sha256: hash.digest('hex'),
      commit: async () => {
        await rename(partial, final);
        await this.removeStaged(key); // what crashed runs left
      },
      discard: () => rm(partial, { force: true }),
    };
  }

  private async removeStaged(key: string): Promise<void> {
    const name = path.basename(this.file(key));
    const staged = (await readdir(this.dir).catch(() => [])).filter((f) => f.startsWith(`${name}.`) && f.endsWith('.partial'));
    for (const f of staged) await rm(path.join(this.dir, f), { force: true });
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
    await this.removeStaged(key);
  }
}
