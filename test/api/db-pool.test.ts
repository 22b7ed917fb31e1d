import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/client.js';
import { migrate, migrationsApplied } from '../../src/db/migrate.js';
import { emptyPostgresDb, onPostgres } from '../helpers/db.js';

describe('the PostgreSQL pool', () => {
  // migrate() holds its session lock on one connection and applies on another: a pool of one
  // connection waited for itself until the test timed out.
  it.skipIf(!onPostgres())(
    'migrates an empty database when asked for a single connection',
    async () => {
      const empty = await emptyPostgresDb();
      const db = await openDb({ databaseUrl: empty.url, dataDir: '', poolSize: 1 });
      try {
        expect((await migrate(db)).length).toBeGreaterThan(0);
        expect(await migrationsApplied(db)).toBe(true);
      } finally {
        await db.close();
        await empty.drop();
      }
    },
    60_000,
  );
});
