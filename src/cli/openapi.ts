import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { openDb } from '../db/client.js';
import { migrate } from '../db/migrate.js';

/**
 * The OpenAPI document of an app configured by `env`. It touches no data directory: the app is
 * built on a throwaway one, with an in-memory database and no job workers.
 */
export async function openApiDocument(env: Record<string, string | undefined>): Promise<Record<string, unknown>> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'berth-openapi-'));
  try {
    const db = await openDb({ databaseUrl: null, dataDir: scratch, inMemory: true });
    await migrate(db);
    const app = await buildApp({
      config: loadConfig({ ...env, BERTH_JOBS: 'false', BERTH_DATA_DIR: scratch }),
      db,
      logger: false,
    });
    await app.ready();
    const document = app.swagger() as unknown as Record<string, unknown>;
    await app.close();
    await db.close();
    return document;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
