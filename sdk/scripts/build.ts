import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm run sdk:build`: the package as it is published, in `sdk/dist/` — JavaScript and type
 * declarations compiled for Node 20+ and browsers (DOM types, no Node built-ins), the OpenAPI
 * document and the README, and a package.json whose exports name the compiled files. Publish
 * with `npm publish sdk/dist`. (In this repository the workspace uses the TypeScript source.)
 */
const SDK = fileURLToPath(new URL('..', import.meta.url));
export const DIST = path.join(SDK, 'dist');

export function build(): void {
  rmSync(DIST, { recursive: true, force: true });
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  execFileSync(process.execPath, [tsc, '-p', path.join(SDK, 'tsconfig.build.json')], { stdio: 'inherit' });
  const source = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as Record<string, unknown>;
  const manifest = {
    ...source,
    private: undefined,
    exports: { '.': { types: './index.d.ts', default: './index.js' }, './openapi.json': './openapi.json' },
    main: './index.js',
    types: './index.d.ts',
    sideEffects: false,
  };
  writeFileSync(path.join(DIST, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  for (const file of ['openapi.json', 'README.md']) copyFileSync(path.join(SDK, file), path.join(DIST, file));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  build();
  process.stdout.write(`built ${DIST}\n`);
}
