import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { processStat } from './process-start.js';

/**
 * The pid of the running daemon whose pid file this is, or an error saying that `daemon` is not
 * running. A pid file outlives a daemon that was killed, and the kernel gives its pid to another
 * process in time: a signal sent there would hit that process, and the daemon would seem told. So
 * the pid counts only while its process runs `program` (the name the kernel keeps, cut to 15
 * characters; `master` for Postfix). Another process's name is not told: errors reach the API.
 */
export async function daemonPid(daemon: string, pidFile: string, program = daemon): Promise<number> {
  const file = path.basename(pidFile);
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`${daemon} is not running (no pid in ${file})`);
  const stat = await processStat(pid);
  if (stat === null) throw new Error(`${daemon} is not running (pid ${pid} from ${file} is gone)`);
  if (stat.name !== program.slice(0, 15))
    throw new Error(`${daemon} is not running (pid ${pid} from ${file} is another program's)`);
  return pid;
}

/** Sends `sig` to the daemon whose pid file this is; see daemonPid. */
export async function signalDaemon(daemon: string, pidFile: string, sig: NodeJS.Signals, program = daemon): Promise<void> {
  const pid = await daemonPid(daemon, pidFile, program);
  try {
    process.kill(pid, sig);
  } catch (err) {
    // Exited between the check and the signal.
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') throw new Error(`${daemon} is not running (pid ${pid} is gone)`);
    throw err;
  }
}
