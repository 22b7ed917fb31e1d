import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** A new directory `berth-<name>-…` under the system's temporary one, removed when the calling test ends. */
export function testDir(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `berth-${name}-`));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
