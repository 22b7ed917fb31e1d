import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';

/** util-linux's setpriv (Debian's essential util-linux has it); absent off Linux. */
const SETPRIV = process.platform === 'linux' ? ['/usr/bin/setpriv', '/bin/setpriv'].find((f) => existsSync(f)) : undefined;

/**
 * Run between setpriv and the tool: the kernel sends the signal only for a parent that dies after
 * setpriv asked for it, so one that died before (the tool's parent is then another process) ends
 * here, 125, before the tool starts. A constant script: the pid and the tool come as its arguments.
 */
const PARENT_CHECK = 'test "$PPID" = "$1" || { echo "its parent is gone" >&2; exit 125; }; shift; exec "$@"';

/** setpriv's arguments that start `file` tied to the process `parent`. */
export const tiedArgs = (file: string, args: readonly string[], parent: number): string[] => [
  '--pdeathsig',
  'KILL',
  '--',
  '/bin/sh',
  '-c',
  PARENT_CHECK,
  'tied',
  String(parent),
  file,
  ...args,
];

/**
 * Starts a tool that must not outlive this process: through `setpriv --pdeathsig KILL`, which
 * asks the kernel to kill the tool when its parent dies. Without it, a `mariadb-dump` started
 * for an agent that was killed keeps its transaction open (and waits on any lock it waits on)
 * until it next writes to the pipe nobody reads.
 * Where setpriv is absent the tool starts on its own, as before.
 */
export function tiedSpawn(file: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  return SETPRIV ? spawn(SETPRIV, tiedArgs(file, args, process.pid), options) : spawn(file, args, options);
}

/** setpriv's path where `tiedSpawn` ties its tools to this process; undefined elsewhere (tests say why they skip). */
export const setprivPath = SETPRIV;
