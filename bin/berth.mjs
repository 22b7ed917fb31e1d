#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx berth ...` works from a checkout.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url));
const r = spawnSync(process.execPath, [tsx, `${root}src/cli/main.ts`, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
