/**
 * Global setup: on PGlite, the image of a migrated database, made once for the run. Every test
 * file runs in a process of its own, and a fresh database loaded from the image (test/helpers/db.ts)
 * is ready in a quarter of the time a new cluster's initdb takes; the suite opens about a hundred.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDb, pgliteImage } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The image's file; empty on PostgreSQL. */
    pgliteImage: string;
  }
}

export default async function setup(project: TestProject) {
  if (process.env.TEST_DATABASE_URL) return void project.provide('pgliteImage', '');
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-pglite-image-'));
  const file = path.join(dir, 'migrated.tar');
  const db = await openDb({ databaseUrl: null, dataDir: '', inMemory: true });
  try {
    await migrate(db);
    // Berth's database alone: the templates (nothing here creates a database) are half the
    // image's files, each one a file system call when a database opens from it.
    await db.query("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')");
    for (const template of ['template0', 'template1']) await db.query(`DROP DATABASE ${template}`);
    // A database in memory holds every page already: a buffer pool of PGlite's default 128 MB
    // only copies them, and preparing it (growing the WebAssembly memory past its initial 128 MB,
    // zeroing the pool's tables) was a third or more of the 1.2-1.5 s of CPU an open took.
    await db.query("ALTER SYSTEM SET shared_buffers = '16MB'");
    writeFileSync(file, Buffer.from(await (await pgliteImage(db)).arrayBuffer()));
  } finally {
    await db.close();
  }
  project.provide('pgliteImage', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
