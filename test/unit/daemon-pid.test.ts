import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { daemonPid, signalDaemon } from '../../src/lib/daemon-pid.js';

describe('a daemon’s pid from its pid file', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'berth-pid-'));
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const pidFile = async (pid: number | string) => {
    const file = path.join(dir, 'daemon.pid');
    await writeFile(file, `${pid}\n`);
    return file;
  };

  it('is the pid while its process runs the daemon’s program, and is signalled then', async () => {
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    const exited = new Promise((resolve) => sleeper.on('exit', (_code, sig) => resolve(sig)));
    const file = await pidFile(sleeper.pid as number);
    expect(await daemonPid('sleeper', file, 'sleep')).toBe(sleeper.pid);
    await signalDaemon('sleeper', file, 'SIGTERM', 'sleep');
    expect(await exited).toBe('SIGTERM');
  });

  it('is refused, unsignalled, where the pid went to another program (a pid file that outlived its daemon)', async () => {
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const file = await pidFile(other.pid as number);
      await expect(signalDaemon('nginx', file, 'SIGTERM')).rejects.toThrow(
        `nginx is not running (pid ${other.pid} from daemon.pid is another program's)`,
      );
      expect(other.exitCode).toBeNull();
      expect(other.signalCode).toBeNull();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('is refused where the process is gone or the file holds no pid', async () => {
    await expect(daemonPid('nginx', await pidFile(2 ** 22 + 1))).rejects.toThrow(
      /^nginx is not running \(pid \d+ from daemon.pid is gone\)$/,
    );
    await expect(daemonPid('nginx', await pidFile('garbage'))).rejects.toThrow('nginx is not running (no pid in daemon.pid)');
    await expect(daemonPid('nginx', path.join(dir, 'absent.pid'))).rejects.toThrow('nginx is not running (no pid in absent.pid)');
  });
});
