import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Db } from './client.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any constants: they serialise concurrent starts of several processes on one PostgreSQL.
const MIGRATION_LOCK = 748_213_901;
/** Held while pg-boss creates or migrates its schema (see jobs/queue.ts). */
export const JOB_SCHEMA_LOCK = 748_213_903;

function listMigrations(): { version: string; sql: string }[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: readFileSync(MIGRATIONS_DIR + f, 'utf8') }));
}

/**
 * Applies the pending forward-only migrations; re-running is a no-op. Returns what it applied.
 * Under a session lock from the first statement on: two processes starting together on an empty
 * database would otherwise both create schema_migrations (a duplicate key in pg_type).
 */
export async function migrate(db: Db): Promise<string[]> {
  return db.withSessionLock(MIGRATION_LOCK, async () => {
    await db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    return db.transaction(async (tx) => {
      const done = new Set(
        (await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
      );
      const applied: string[] = [];
      for (const m of listMigrations()) {
        if (done.has(m.version)) continue;
        // Statements are split on lines ending with ';' (our migrations keep one statement per block),
        // because a parameterised transaction runs one statement per call on both drivers.
        for (const statement of splitStatements(m.sql)) await tx.query(statement);
        await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
        applied.push(m.version);
      }
      return applied;
    });
  });
}

/** True when every known migration has been applied (for /readyz). */
export async function migrationsApplied(db: Db): Promise<boolean> {
  const r = await db.query<{ version: string }>('SELECT version FROM schema_migrations');
  const done = new Set(r.rows.map((x) => x.version));
  return listMigrations().every((m) => done.has(m.version));
}

function splitStatements(sql: string): string[] {
  const text = sql
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n');
  const statements: string[] = [];
  let current = '';
  // A ';' that ends a line ends a statement, except inside a dollar-quoted function body.
  text.split('$$').forEach((part, i) => {
    if (i % 2 === 1) {
      current += `$$${part}$$`;
      return;
    }
    const [first, ...rest] = part.split(/;\s*\n/);
    current += first;
    for (const next of rest) {
      statements.push(current);
      current = next;
    }
  });
  statements.push(current);
  return statements.map((s) => s.trim().replace(/;$/, '')).filter(Boolean);
}
