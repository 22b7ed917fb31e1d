import { generateTokenSecret } from '../auth/secret.js';
import { loadConfig } from '../config.js';
import { openDb } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import { mintOperatorToken } from '../modules/tokens/service.js';
import { openMigratedDb } from '../runtime.js';
import { openApiDocument } from './openapi.js';

/** The server's own commands; resolves with the exit code (-1: keep running, the API serves). */
export async function runServerCommand(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const config = loadConfig();
  switch (command) {
    case 'serve':
      await import('../server.js');
      return -1;
    case 'migrate': {
      const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      try {
        const applied = await migrate(db);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'up to date\n');
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'token': {
      if (rest[0] !== 'create' || !rest.includes('--operator')) break;
      const nameAt = rest.indexOf('--name');
      const name = nameAt >= 0 ? (rest[nameAt + 1] ?? '') : 'operator (cli)';
      const db = await openMigratedDb(config);
      try {
        const secret = generateTokenSecret();
        await db.transaction((tx) => mintOperatorToken(tx, secret, name));
        process.stdout.write(`${secret}\n`);
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'agent':
      return (await import('../agent/command.js')).runAgentCommand(rest, config);
    case 'openapi': {
      const document = JSON.stringify(await openApiDocument(process.env), null, 2) + '\n';
      // Flushed before the exit below: into a pipe, a write still queued would be cut off.
      await new Promise((resolve) => process.stdout.write(document, resolve));
      return 0;
    }
  }
  return 2;
}
