import { Command, CommanderError, Option } from 'commander';
import { completionCommand } from './completion.js';
import { contextCommand } from './context-command.js';
import { deployCommand } from './deploy.js';
import { dnsCommand } from './dns-sync.js';
import { downloadCommand } from './download.js';
import { describeError, EXIT } from './errors.js';
import { tailCommand } from './events-tail.js';
import { mcpCommand } from './mcp/command.js';
import { resourceCommand } from './resource-commands.js';
import { RESOURCES } from './resources.js';
import { createRuntime } from './runtime.js';

const SERVER_HELP = `
Server commands (on the machine that runs Berth):
  serve                               start the API (same as npm start)
  migrate                             apply pending database migrations
  token create --operator [--name N]  mint an operator token directly in the database
  openapi                             print the OpenAPI document

Exit codes: 0 success, 1 the API refused (its problem is printed), 2 usage error.`;

const leaves = (cmd: Command): Command[] => (cmd.commands.length ? cmd.commands.flatMap(leaves) : [cmd]);

/** The `berth` client: every resource of the API, plus dns sync, deploy, downloads, tail, completion. */
function buildProgram(argv: string[], env: Record<string, string | undefined>): Command {
  let action: Command | undefined;
  const program = new Command('berth')
    .description('Berth from the command line: hosting accounts, domains, mail, sites, backups.')
    .option('--context <name>', 'the context to use (default: the current one; BERTH_URL/BERTH_TOKEN override)')
    .addHelpText('after', SERVER_HELP)
    .showSuggestionAfterError();
  const rt = createRuntime(env, () => ({
    context: program.opts<{ context?: string }>().context,
    output: action?.opts<{ output?: string }>().output,
  }));

  program.addCommand(contextCommand(rt));
  // A resource's verbs are made from the OpenAPI document (1.2 MB): only those of the resource
  // named are, so `berth deploy` never reads it; the others stand by their name for the help.
  const everything = argv.includes('completion');
  const standIns = new Set<Command>();
  for (const def of RESOURCES) {
    if (!everything && !argv.includes(def.name)) {
      const standIn = new Command(def.name).description(def.about);
      standIns.add(standIn);
      program.addCommand(standIn);
      continue;
    }
    const cmd = resourceCommand(def, rt);
    if (def.name === 'backups') cmd.addCommand(downloadCommand(rt));
    if (def.name === 'events') cmd.addCommand(tailCommand(rt));
    program.addCommand(cmd);
  }
  program.addCommand(dnsCommand(rt));
  program.addCommand(deployCommand(rt));
  program.addCommand(mcpCommand(rt));
  program.addCommand(completionCommand(() => program));

  // `-o table|json` on every command that prints (after the command, as in `berth domains list -o json`).
  for (const leaf of leaves(program)) {
    if (!standIns.has(leaf) && !leaf.options.some((o) => o.short === '-o'))
      leaf.addOption(new Option('-o, --output <format>', 'table or json (default: table on a terminal, json in a pipe)'));
  }
  program.hook('preAction', (_root, command) => {
    action = command;
  });
  for (const cmd of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)])
    cmd.exitOverride().configureOutput({ outputError: (text, write) => write(text) });
  return program;
}

/** Runs the client with `argv` (without `node` and the script); resolves with the exit code. */
export async function runClient(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  const program = buildProgram(argv, env);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError)
      return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version'
        ? EXIT.ok
        : EXIT.usage;
    const { text, code } = describeError(err);
    process.stderr.write(text + '\n');
    return code;
  }
}
