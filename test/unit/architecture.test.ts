import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cruise } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

/**
 * The rules of the house that no linter states: which unit writes which table (the map in
 * ARCHITECTURE.md is the rule), no cycle between units even through type-only imports, and no
 * comment that sends a reader to a document outside the repository.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const SRC = path.join(ROOT, 'src');

/** The unit a source file belongs to: `modules/<name>`, a top-level folder, or a top-level file. */
function unitOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  if (parts[0] === 'modules') return `modules/${parts[1]}`;
  return parts.length === 1 ? (parts[0] as string).replace(/\.ts$/, '') : (parts[0] as string);
}

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'migrations' ? [] : sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });

/** `| \`unit\` | \`table\`, \`table\` |` rows of ARCHITECTURE.md's "Who writes which table". */
function ownership(): Map<string, string> {
  const text = readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('Who writes which table'));
  if (!section) throw new Error('ARCHITECTURE.md has no section "Who writes which table"');
  const owner = new Map<string, string>();
  for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const [unit, tables] = line
      .split('|')
      .slice(1, 3)
      .map((c) => c.trim());
    for (const table of tables?.match(/`([a-z_]+)`/g) ?? []) owner.set(table.slice(1, -1), (unit as string).slice(1, -1));
  }
  return owner;
}

/** The tables a file's SQL writes: statements in its string literals only (comments name statements too). */
function writtenTables(source: string): string[] {
  const strings = source.match(/`[^`]*`|'[^'\n]*'/g) ?? [];
  const tables = new Set<string>();
  for (const s of strings)
    for (const m of s.matchAll(/\b(?:INSERT INTO|(?<!DO )UPDATE|DELETE FROM|TRUNCATE)\s+([a-z_][a-z0-9_.]*)/g))
      tables.add(m[1] as string);
  // An apply unit's state is written through db/unit-state.ts, named by its owner.
  for (const m of source.matchAll(/\bunitState\('([a-z_]+)'/g)) tables.add(m[1] as string);
  return [...tables];
}

describe('the architecture', () => {
  it('each table is written by the unit ARCHITECTURE.md names as its owner, and by no other', () => {
    const owner = ownership();
    const wrong: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const unit = unitOf(file);
      for (const table of writtenTables(readFileSync(file, 'utf8'))) {
        const expected = owner.get(table.replace(/^pgboss\..*/, 'pgboss'));
        if (expected !== unit) wrong.push(`${path.relative(ROOT, file)} writes ${table} (owner: ${expected ?? 'none listed'})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the scan sees a write to another module’s table', () => {
    expect(writtenTables('tx.query(`UPDATE domains SET x = 1`); // an UPDATE only where it changed')).toEqual(['domains']);
    expect(writtenTables("q('INSERT INTO mail_units AS u (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET b = 2')")).toEqual([
      'mail_units',
    ]);
    expect(writtenTables("export const webUnits = unitState('sites', 'id');")).toEqual(['sites']);
  });

  it('no cycle between units, type-only imports included', async () => {
    const result = await cruise(['src'], {
      tsPreCompilationDeps: true,
      doNotFollow: { path: 'node_modules' },
      tsConfig: { fileName: path.join(ROOT, 'tsconfig.json') },
    });
    const output = result.output as { modules: { source: string; dependencies: { resolved: string }[] }[] };
    const edges = new Map<string, Set<string>>();
    for (const m of output.modules.filter((x) => x.source.startsWith('src/'))) {
      const from = unitOf(path.join(ROOT, m.source));
      for (const d of m.dependencies.filter((x) => x.resolved.startsWith('src/'))) {
        const to = unitOf(path.join(ROOT, d.resolved));
        if (to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to));
      }
    }
    const cycles: string[] = [];
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
      [...(edges.get(from) ?? [])].some((n) => n === to || (!seen.has(n) && (seen.add(n), reaches(n, to, seen))));
    for (const [from, tos] of edges) for (const to of tos) if (reaches(to, from)) cycles.push(`${from} → ${to} → … → ${from}`);
    expect(cycles).toEqual([]);
  }, 60_000);

  it('no source comment sends the reader to a document outside the repository', () => {
    const cites = sourceFiles(SRC).filter((f) => /SPEC\.md|SPEC §|DESIGN\.md/.test(readFileSync(f, 'utf8')));
    expect(cites.map((f) => path.relative(ROOT, f))).toEqual([]);
  });
});
