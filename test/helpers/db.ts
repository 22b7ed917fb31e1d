import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { openDb, type Db } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';

/**
 * A fresh database for one test app: in-memory PGlite by default, or a throwaway database on
 * the PostgreSQL server named by TEST_DATABASE_URL (created here, dropped by `drop`).
 */
export async function freshDb(): Promise<{ db: Db; url: string | null; drop: () => Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) {
    // Loaded from the run's migrated image (test/helpers/pglite-image.ts); `migrate` is then a no-op.
    const db = await openDb({ databaseUrl: null, dataDir: '', inMemory: true, image: migratedImage() });
    await migrate(db);
    return { db, url: null, drop: async () => undefined };
  }
  const empty = await emptyPostgresDb();
  const db = await openDb({ databaseUrl: empty.url, dataDir: '', poolSize: 10 });
  await migrate(db);
  return { db, url: empty.url, drop: empty.drop };
}

let image: Blob | undefined;
/** The run's image, read once per test file's process (42 MB), not once per database. */
function migratedImage(): Blob | undefined {
  const file = inject('pgliteImage');
  if (file) image ??= new Blob([readFileSync(file)]);
  return image;
}

/** A new, empty database on the PostgreSQL server of TEST_DATABASE_URL (no schema at all). */
export async function emptyPostgresDb(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) throw new Error('TEST_DATABASE_URL is not set');
  // Named after the database CI gave us, so CI can drop whatever a crashed run left behind.
  const name = `${new URL(admin).pathname.slice(1) || 'berth'}_t_${randomBytes(6).toString('hex')}`.replace(/[^a-z0-9_]/g, '_');
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

export const onPostgres = (): boolean => Boolean(process.env.TEST_DATABASE_URL);
