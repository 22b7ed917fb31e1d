import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { processStart } from '../../src/lib/process-start.js';
import { setprivPath, tiedArgs } from '../../src/lib/tied-spawn.js';
import { eventually } from '../helpers/app.js';

const tiesChildren = setprivPath !== undefined;
const SKIPPED = tiesChildren ? '' : ' (skipped: util-linux setpriv is not installed)';
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
  `a tool started by tiedSpawn is killed with its parent (SIGKILL), where one spawned plainly outlives it${SKIPPED}`,
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

it.skipIf(!tiesChildren)(`a tool whose parent died before the tie took hold never starts${SKIPPED}`, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-tied-'));
  try {
    // The parent named is not the one setpriv runs under: as if it had died before the tie.
    const orphan = spawnSync(setprivPath as string, tiedArgs('touch', [path.join(dir, 'orphan')], 1));
    expect(orphan.status).toBe(125);
    expect(existsSync(path.join(dir, 'orphan'))).toBe(false);
    const odd = path.join(dir, 'a b; $(touch c)');
    const tied = spawnSync(setprivPath as string, tiedArgs('touch', [path.join(dir, 'tied'), odd], process.pid));
    expect(tied.status, String(tied.stderr)).toBe(0);
    // The tool's arguments reach it as they were given, none read by a shell.
    expect(readdirSync(dir).sort()).toEqual(['a b; $(touch c)', 'tied']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
