import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROBLEM_CODES, PROBLEMS } from '../../src/http/problems.js';

/**
 * The documents keep step with the code: every variable the configuration reads is documented
 * once, in docs/Reference/configuration.md (a row whose first cell names it, alone or with its
 * siblings), and nothing else there; every problem code has its row; every relative link leads
 * to a file; and the README stays a front door.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const VARIABLE = /\b(?:BERTH_[A-Z0-9_]+|DATABASE_URL)\b/g;

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The variables `src/config.ts` reads: `env.NAME`, `int(env, 'NAME', …)`, `bool(env, 'NAME', …)`. */
function variablesRead(): string[] {
  const source = read('src/config.ts');
  const names = [...source.matchAll(/env\.([A-Z][A-Z0-9_]+)|\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1] ?? m[2]);
  return [...new Set(names as string[])].sort();
}

/** The first cells of the configuration table's rows, with the variables each names. */
const rows = (text: string) =>
  text
    .split('\n')
    .filter((l) => /^\| `(BERTH_|DATABASE_URL)/.test(l))
    .map((l) => (l.split('|')[1] ?? '').match(VARIABLE) ?? []);

const markdownFiles = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : [],
  );

describe('the configuration reference', () => {
  it('documents every variable config.ts reads exactly once, and no other', () => {
    const documented = rows(read('docs/Reference/configuration.md')).flat();
    const twice = documented.filter((v, i) => documented.indexOf(v) !== i);
    expect(twice).toEqual([]);
    expect([...documented].sort()).toEqual(variablesRead());
  });

  it('is the only document with a row of the table', () => {
    const others = ['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md', ...markdownFiles('docs')].filter(
      (f) => f !== path.join('docs', 'Reference', 'configuration.md') && rows(read(f)).length > 0,
    );
    expect(others).toEqual([]);
  });
});

it('the problem codes page lists every code with its status and title', () => {
  const rows = read('docs/Reference/problems.md')
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => l.split('|').map((c) => c.trim()));
  const listed = Object.fromEntries(rows.map((r) => [(r[1] as string).slice(1, -1), { status: Number(r[2]), title: r[3] }]));
  const expected = Object.fromEntries(PROBLEM_CODES.map((c) => [c, { status: PROBLEMS[c].status, title: PROBLEMS[c].title }]));
  expect(listed).toEqual(expected);
});

it('every relative link of the documents leads to a file', () => {
  const files = ['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md', 'bench/README.md', 'sdk/README.md', ...markdownFiles('docs')];
  const broken = files.flatMap((file) =>
    [...read(file).matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((m) => m[1] as string)
      .filter((target) => !/^[a-z]+:/.test(target))
      .filter((target) => !existsSync(path.join(ROOT, path.dirname(file), target)))
      .map((target) => `${file} → ${target}`),
  );
  expect(broken).toEqual([]);
});

it('README.md is a front door: the two commands at the top, at most 200 lines', () => {
  const readme = read('README.md');
  expect(readme.split('\n').length).toBeLessThanOrEqual(200);
  const top = readme.slice(0, readme.indexOf('\n## '));
  expect(top).toContain('npm ci && npm start');
  expect(top).toContain('npm test');
});
