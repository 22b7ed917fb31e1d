// Compiles the `berth` command (src/cli/main.ts) into one JavaScript file, dist/berth.mjs, which
// bin/berth.mjs runs: loading TypeScript through tsx cost a client command about a second before
// its first request. `npm ci` runs this (`prepare`: `tsx scripts/build-cli.ts`), as does `npm run pack`. The server's own
// commands (`serve`, `migrate`, `agent`, ...) stay TypeScript: the bundle hands them to tsx, as
// they read files beside their source (migrations, the OpenAPI description's parts).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
// Packages only some commands load: imported from node_modules when they run. The rest is
// bundled, so a command resolves and reads no package before its first request.
const LAZY = ['@modelcontextprotocol/sdk', 'tar', 'tsx'];

/** `./server-commands.js` as a module that loads the TypeScript source through tsx when called. */
const serverThroughTsx: Plugin = {
  name: 'server-through-tsx',
  setup(b) {
    b.onResolve({ filter: /^\.\/server-commands\.js$/ }, () => ({ path: 'server-commands', namespace: 'tsx' }));
    b.onLoad({ filter: /.*/, namespace: 'tsx' }, () => ({
      contents: `
        import { register } from 'tsx/esm/api';
        export async function runServerCommand(argv) {
          register();
          const source = new URL('../src/cli/server-commands.ts', import.meta.url);
          return (await import(source.href)).runServerCommand(argv);
        }`,
      resolveDir: root,
      loader: 'js',
    }));
  },
};

/**
 * Builds `<outdir>/berth.mjs` (default dist/) and its chunks. Beside it, `berth.mjs.inputs.json` names the
 * sources it was built from, so bin/berth.mjs can tell a bundle older than one of them.
 */
export async function buildCli(outdir = path.join(root, 'dist')): Promise<string> {
  const outfile = path.join(outdir, 'berth.mjs');
  const { metafile } = await build({
    metafile: true,
    entryPoints: [path.join(root, 'src', 'cli', 'main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    plugins: [serverThroughTsx],
    external: LAZY,
    // The CommonJS packages bundled (commander) require Node's modules.
    banner: {
      js: "import { createRequire as __berthCreateRequire } from 'node:module'; const require = __berthCreateRequire(import.meta.url);",
    },
    // What a command imports when it runs (`berth mcp`'s SDK) stays in a chunk of its own.
    splitting: true,
    outdir,
    entryNames: 'berth',
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  const sources = Object.keys(metafile.inputs)
    .filter((f) => f.endsWith('.ts') && !f.includes('node_modules/'))
    .map((f) => path.relative(path.dirname(outfile), path.resolve(f)));
  writeFileSync(`${outfile}.inputs.json`, JSON.stringify(sources));
  return outfile;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildCli(process.argv[2]);
