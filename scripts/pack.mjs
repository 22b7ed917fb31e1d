#!/usr/bin/env node
// Makes berth-<version>.tgz in DIR (default: here), the one tarball an operator installs with
// `npm install -g berth-<version>.tgz` on a hosting server or a control plane. It is `npm pack` of
// a staged copy of the package with @berth/sdk and the packages it needs bundled: from the
// workspace itself npm pack leaves a bundled workspace package out (npm/cli#3466), and the SDK
// is not published.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const out = path.resolve(process.argv[2] ?? '.');
const FILES = ['bin', 'dist', 'src', 'deploy', 'docs', 'README.md'];
const read = (file) => JSON.parse(readFileSync(file, 'utf8'));
const manifest = (name) => read(path.join(root, 'node_modules', name, 'package.json'));

/** The SDK and every package it needs, by name. */
function closure(name, seen = new Set()) {
  if (seen.has(name)) return seen;
  seen.add(name);
  for (const dep of Object.keys(manifest(name).dependencies ?? {})) closure(dep, seen);
  return seen;
}

// The compiled client (dist/berth.mjs), built from the sources being packed.
execFileSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'build-cli.ts')], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
});
const stage = mkdtempSync(path.join(tmpdir(), 'berth-pack-'));
try {
  for (const f of FILES) cpSync(path.join(root, f), path.join(stage, f), { recursive: true });
  const pkg = read(path.join(root, 'package.json'));
  const bundled = [...closure('@berth/sdk')];
  for (const name of bundled) {
    const from = realpathSync(path.join(root, 'node_modules', name));
    // The SDK's own sources and document; not its build scripts, examples or dependencies' copies.
    const skip = new Set(['node_modules', 'scripts', 'examples'].map((d) => path.join(from, d)));
    cpSync(from, path.join(stage, 'node_modules', name), { recursive: true, filter: (src) => !skip.has(src) });
    pkg.dependencies[name] ??= manifest(name).version;
  }
  delete pkg.workspaces;
  delete pkg.devDependencies;
  delete pkg.scripts.prepare;
  pkg.files = FILES;
  pkg.bundleDependencies = bundled;
  writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: stage, encoding: 'utf8' }).trim();
  process.stdout.write(`${path.join(out, name)}\n`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
