/**
 * Global setup: after a run of the whole API suite, every JSON 2xx response the OpenAPI document
 * declares must have been produced by some test, with content (a list with an item), and passed
 * the check against the document (document-checked.ts). Production writes responses with `JSON.stringify`
 * (src/http/serialization.ts), so a response shape no test produces would go out unchecked.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    responsesSeenDir: string;
  }
}

const root = path.resolve(import.meta.dirname, '../..');
const apiTests = path.join(root, 'test/api');

/** `METHOD /path status` of every 2xx response with a JSON body in the document. */
function declaredJsonResponses(doc: { paths: Record<string, Record<string, any>> }): string[] {
  const out: string[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const [status, response] of Object.entries<any>(op?.responses ?? {})) {
        if (status.startsWith('2') && response.content?.['application/json']) out.push(`${method.toUpperCase()} ${p} ${status}`);
      }
    }
  }
  return out;
}

export default function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-responses-'));
  project.provide('responsesSeenDir', dir);
  return () => {
    const reports = readdirSync(dir).map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { seen: string[] });
    rmSync(dir, { recursive: true, force: true });
    // Only a run of every API test, unfiltered and passing, can be expected to produce them all.
    const files = project.vitest.state.getFiles();
    const ran = new Set(files.map((f) => f.filepath));
    const whole = readdirSync(apiTests).every((f) => !f.endsWith('.test.ts') || ran.has(path.join(apiTests, f)));
    if (!whole || project.config.testNamePattern || files.some((f) => f.result?.state === 'fail')) return;
    const seen = new Set(reports.flatMap((r) => r.seen));
    const doc = JSON.parse(readFileSync(path.join(root, 'sdk/openapi.json'), 'utf8'));
    const missing = declaredJsonResponses(doc).filter((r) => !seen.has(r));
    if (missing.length > 0) {
      // Vitest only logs what a teardown throws; the run must fail.
      console.error(
        `\nNo test produced these responses with content, so their schemas went unchecked:\n  ${missing.join('\n  ')}\n`,
      );
      process.exitCode = 1;
    }
  };
}
