import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { processStart } from '../../src/lib/process-start.js';
import { tiesChildren } from '../../src/lib/tied-spawn.js';
import { eventually } from '../helpers/app.js';

const MODULE = fileURLToPath(new URL('../../src/lib/tied-spawn.ts', import.meta.url));

/** A parent that starts one `sleep` through tiedSpawn and one plainly, and prints their pids. */
const PARENT = `
  import { spawn } from 'node:child_process';
  import { tiedSpawn } from ${JSON.stringify(MODULE)};
  const tied = tiedSpawn('sleep', ['60'], { stdio: 'ignore' });
  const plain = spawn('sleep', ['60'], { stdio: 'ignore' });
  console.log(JSON.stringify({ tied: tied.pid, plain: plain.pid }));
`;

it.skipIf(!tiesChildren)(
  `a tool started by tiedSpawn is killed with its parent (SIGKILL), where one spawned plainly outlives it${tiesChildren ? '' : ' (skipped: util-linux setpriv is not installed)'}`,
  async () => {
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PARENT], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let plain: number | undefined;
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: parent.stdout }).once('line', resolve);
        parent.once('exit', (code) => reject(new Error(`the parent exited (${code})`)));
      });
      const pids = JSON.parse(line) as { tied: number; plain: number };
      plain = pids.plain;
      // setpriv has asked for the signal once it has become the tool.
      await eventually(async () => readFileSync(`/proc/${pids.tied}/comm`, 'utf8').trim() === 'sleep');
      parent.kill('SIGKILL');
      await eventually(async () => (await processStart(pids.tied)) === null);
      expect(await processStart(pids.plain)).not.toBeNull();
    } finally {
      parent.kill('SIGKILL');
      if (plain && (await processStart(plain)) !== null) process.kill(plain, 'SIGKILL');
    }
  },
);
