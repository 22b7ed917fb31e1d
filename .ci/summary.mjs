// Prints vitest JSON results as the plain closing line CI reads: "label: N passed, N failed, N skipped".
import { readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;
for (const [label, file] of process.argv.slice(2).map((a) => a.split('='))) {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
  console.log(`${label}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
