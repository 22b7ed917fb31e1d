import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processStart } from '../../src/lib/process-start.js';
import { eventually } from '../helpers/app.js';

describe('a process’s start time', () => {
  it('is read for a running process, and is null for one gone or exited but not yet reaped', async () => {
    expect(await processStart(process.pid)).toMatch(/^\d+$/);
    expect(await processStart(2 ** 22 + 1)).toBeNull(); // above Linux's largest pid
    // `sleep 0.1` under a shell that then becomes `sleep 30`, which never reaps it: a zombie.
    const parent = spawn('sh', ['-c', 'sleep 0.1 & exec sleep 30'], { stdio: 'ignore' });
    try {
      const child = await eventually(async () => {
        const children = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, 'utf8').trim();
        return children.split(' ').filter(Boolean)[0];
      });
      await eventually(async () => (await processStart(child)) === null);
      expect(readFileSync(`/proc/${child}/stat`, 'utf8')).toMatch(/\) Z /);
      expect(await processStart(parent.pid as number)).toMatch(/^\d+$/);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
