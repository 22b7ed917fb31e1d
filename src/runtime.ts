import type { Config } from './config.js';
import { openDb, type Db } from './db/client.js';
import { migrate } from './db/migrate.js';

/** Opens the configured database and brings its schema up to date. */
export async function openMigratedDb(config: Readonly<Config>): Promise<Db> {
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrate(db);
    return db;
  } catch (err) {
    await db.close();
    throw err;
  }
}
