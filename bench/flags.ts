import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The V8 flags `npm start` gives the service (package.json's start script), given to the servers
 * measured here too, so that they run as the service does; BENCH_SERVER_FLAGS adds others
 * (`--cpu-prof`, say).
 */
export const SERVER_FLAGS = [
  ...(
    JSON.parse(readFileSync(path.resolve(import.meta.dirname, '..', 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start
    .split(/\s+/)
    .filter((arg) => /^--[\w-]+-size=\d+$/.test(arg)),
  ...(process.env.BENCH_SERVER_FLAGS ?? '').split(/\s+/).filter(Boolean),
];
