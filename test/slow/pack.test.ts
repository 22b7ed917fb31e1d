import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

/**
 * What an operator installs on a new server: the one tarball `npm run pack` makes, installed with
 * `npm install -g` into an empty prefix (its dependencies from the npm registry or the cache),
 * runs `berth agent --help` and `berth --help` from there, with no checkout beside it.
 */
const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const work = mkdtempSync(path.join(tmpdir(), 'berth-pack-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// It touches no database: the PostgreSQL run of the slow suite leaves it to the PGlite one.
it.skipIf(Boolean(process.env.TEST_DATABASE_URL))(
  'npm run pack makes one tarball that npm install -g installs, and its berth runs',
  async () => {
    const tarball = (await run(process.execPath, [path.join(root, 'scripts/pack.mjs'), work])).stdout.trim();
    expect(path.basename(tarball)).toMatch(/^berth-\d+\.\d+\.\d+\.tgz$/);
    const prefix = path.join(work, 'prefix');
    await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      cwd: work,
      maxBuffer: 16 * 1024 * 1024,
    });
    const berth = path.join(prefix, 'bin', 'berth');
    const env = { PATH: process.env.PATH ?? '', HOME: work };
    const agent = await run(berth, ['agent', '--help'], { cwd: work, env });
    expect(agent.stdout).toContain('berth agent enrol --url URL --token TOKEN --ca-fingerprint sha256:HEX');
    expect((await run(berth, ['--help'], { cwd: work, env })).stdout).toContain('Usage: berth');
    // The client runs compiled there (bin/berth.mjs takes the bundle when no source is newer).
    expect(existsSync(path.join(prefix, 'lib', 'node_modules', 'berth', 'dist', 'berth.mjs'))).toBe(true);
  },
  240_000,
);
