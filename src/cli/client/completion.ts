import { Command } from 'commander';
import { UsageError } from './errors.js';

interface Node {
  name: string;
  children: Node[];
  flags: string[];
}

const tree = (cmd: Command): Node => ({
  name: cmd.name(),
  children: cmd.commands.map(tree),
  flags: cmd.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f))),
});

/** Bash (and zsh through bashcompinit): words by position, from the command tree itself. */
function bash(root: Node): string {
  const words = (n: Node) => [...n.children.map((c) => c.name), ...n.flags, '--help'].join(' ');
  const level2 = root.children
    .map((c) => {
      const level3 = c.children.map((g) => `          ${g.name}) words="${words(g)}" ;;`).join('\n');
      return `      ${c.name})
        if [ "$COMP_CWORD" -eq 2 ]; then words="${words(c)}"; else
        case "\${COMP_WORDS[2]}" in
${level3}
        esac; fi ;;`;
    })
    .join('\n');
  return `# berth completion for bash: source <(berth completion bash)
_berth() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words=""
  if [ "$COMP_CWORD" -eq 1 ]; then words="${words(root)}"; else
    case "\${COMP_WORDS[1]}" in
${level2}
    esac
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _berth berth
`;
}

function fish(root: Node): string {
  const lines = ['# berth completion for fish: berth completion fish | source', 'complete -c berth -f'];
  for (const c of root.children) {
    lines.push(`complete -c berth -n __fish_use_subcommand -a ${c.name}`);
    for (const g of c.children) lines.push(`complete -c berth -n "__fish_seen_subcommand_from ${c.name}" -a ${g.name}`);
    for (const f of c.flags.filter((x) => x.startsWith('--')))
      lines.push(`complete -c berth -n "__fish_seen_subcommand_from ${c.name}" -l ${f.slice(2)}`);
    for (const g of c.children)
      for (const f of g.flags.filter((x) => x.startsWith('--')))
        lines.push(`complete -c berth -n "__fish_seen_subcommand_from ${g.name}" -l ${f.slice(2)}`);
  }
  return lines.join('\n') + '\n';
}

/** `berth completion bash|zsh|fish`: the script to source, made from the commands as they are. */
export function completionCommand(program: () => Command): Command {
  return new Command('completion')
    .description('Print a shell completion script (bash, zsh or fish)')
    .argument('<shell>', 'bash, zsh or fish')
    .action((shell: string) => {
      const root = tree(program());
      const scripts: Record<string, () => string> = {
        bash: () => bash(root),
        zsh: () =>
          `# berth completion for zsh: source <(berth completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n${bash(root)}`,
        fish: () => fish(root),
      };
      const render = scripts[shell];
      if (!render) throw new UsageError(`no completion for "${shell}": bash, zsh or fish`);
      process.stdout.write(render());
    });
}
