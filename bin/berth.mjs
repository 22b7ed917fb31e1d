#!/usr/bin/env node
// Runs `berth`: the compiled dist/berth.mjs (scripts/build-cli.mjs, run by `npm ci`), unless one
// of the sources it was built from changed since (a checkout being worked on); then the
// TypeScript source through tsx's loader, a second slower but never stale.
import { readFileSync, statSync } from 'node:fs';

const bundle = new URL('../dist/berth.mjs', import.meta.url);
const mtime = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs;

/** Whether the bundle is there and no source of it is newer (a source gone counts as unchanged). */
function current() {
  const built = mtime(bundle);
  if (built === undefined) return false;
  try {
    const sources = JSON.parse(readFileSync(new URL('berth.mjs.inputs.json', bundle), 'utf8'));
    return sources.every((f) => (mtime(new URL(f, bundle)) ?? 0) <= built);
  } catch {
    return false;
  }
}

if (current()) {
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
