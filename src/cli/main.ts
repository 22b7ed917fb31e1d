/**
 * `berth`: the server's own commands (`serve`, `migrate`, `token create --operator`, `openapi`)
 * run in this process against its database; every other command is the API client (./client),
 * which talks to a server over HTTP and loads none of the server's code.
 */
const SERVER_COMMANDS = new Set(['serve', 'migrate', 'openapi', 'agent']);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const server =
    SERVER_COMMANDS.has(command ?? '') || (command === 'token' && rest[0] === 'create' && rest.includes('--operator'));
  if (server) return (await import('./server-commands.js')).runServerCommand(argv);
  // Started by cron as root on a hosting server: the runner alone, none of the server's code.
  if (command === 'cron-run') return (await import('../provisioning/cron/command.js')).cronRunCommand(rest);
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
    // Nothing here imports the server's code (its error classes would bring in its schemas and
    // argon2: 700 modules, a second on every client command): any error is told by its message.
    process.stderr.write(`berth: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
