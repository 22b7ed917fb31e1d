import { ConfigError } from '../config.js';
import { DirLockedError } from '../db/lock.js';

/**
 * `berth`: the server's own commands (`serve`, `migrate`, `token create --operator`, `openapi`)
 * run in this process against its database; every other command is the API client (./client),
 * which talks to a server over HTTP and loads none of the server's code.
 */
const SERVER_COMMANDS = new Set(['serve', 'migrate', 'openapi']);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const server =
    SERVER_COMMANDS.has(command ?? '') || (command === 'token' && rest[0] === 'create' && rest.includes('--operator'));
  if (server) return (await import('./server-commands.js')).runServerCommand(argv);
  return (await import('./client/program.js')).runClient(argv);
}

// A reader that stops early (`berth events tail | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

main(process.argv.slice(2))
  .then((code) => {
    if (code >= 0) process.exit(code);
  })
  .catch((err: unknown) => {
    const known = err instanceof ConfigError || err instanceof DirLockedError;
    process.stderr.write(`berth: ${known || !(err instanceof Error) ? String((err as Error).message ?? err) : err.message}\n`);
    process.exit(1);
  });
