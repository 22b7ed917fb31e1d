import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';

/** util-linux's setpriv (Debian's essential util-linux has it); absent off Linux. */
const SETPRIV = process.platform === 'linux' ? ['/usr/bin/setpriv', '/bin/setpriv'].find((f) => existsSync(f)) : undefined;

/**
 * Starts a tool that must not outlive this process: through `setpriv --pdeathsig KILL`, which
 * asks the kernel to kill the tool when its parent dies. Without it, a `mariadb` client loading
 * a dump for an agent that was killed reads what is left in its pipe, takes the pipe's end for
 * the dump's and runs those statements while the restarted agent loads the same dump again.
 * Where setpriv is absent the tool starts on its own, as before.
 */
export function tiedSpawn(file: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  return SETPRIV ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', file, ...args], options) : spawn(file, args, options);
}

/** Whether `tiedSpawn` ties its tools to this process here (tests say why they skip). */
export const tiesChildren = SETPRIV !== undefined;
