// Prints vitest JSON results as the plain closing lines CI reads: "label: N passed, N failed, N skipped",
// and, for each failed test, its file, its name and the start of its error. Only the end of a CI log
// may be kept, so a failure has to be named here, not only in the reporter's output far above.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
for (const [label, file] of process.argv.slice(2).map((a) => a.split('='))) {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
  // A run can fail outside every test (a worker that crashed took its tests with it, an unhandled
  // error): no test says so, so the run itself is counted as one failure.
  const outside = !r.success && r.numFailedTests === 0 && !r.testResults.some((s) => s.status === 'failed');
  if (outside) {
    failed += 1;
    failures.push({
      label,
      where: '(the run)',
      name: 'errors outside any test: a crashed worker or an unhandled error (the reporter above names it)',
      messages: [],
    });
  }
  const failedHere = r.numFailedTests + (outside ? 1 : 0);
  console.log(
    `${label}: ${r.numPassedTests} passed, ${failedHere} failed, ${r.numPendingTests + r.numTodoTests} skipped${timing(r)}`,
  );
  for (const suite of r.testResults) {
    const where = relative(process.cwd(), suite.name);
    const failedTests = suite.assertionResults.filter((t) => t.status === 'failed');
    for (const t of failedTests) failures.push({ label, where, name: t.fullName, messages: t.failureMessages });
    // A file that fails before its tests run (an import, a hook) has no failed test to name.
    if (suite.status === 'failed' && failedTests.length === 0) {
      failures.push({ label, where, name: '(the file itself)', messages: [suite.message] });
    }
  }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
// The run's own exit codes decide too (.ci/run's last line); a failure counted here is one as well.
if (failed > 0) process.exitCode = 1;
for (const f of failures) {
  console.log(`\nFAILED ${f.label}: ${f.where} > ${f.name}`);
  const text = f.messages.filter(Boolean).join('\n').split('\n').slice(0, 12).join('\n');
  if (text) console.log(text.replace(/^/gm, '  '));
}

/**
 * The run's time and its three longest files: only the end of a CI log may be kept, and a run that
 * took longer than the last one has to say where.
 */
function timing(r) {
  const files = r.testResults
    .map((s) => ({ name: relative(process.cwd(), s.name), s: (s.endTime - s.startTime) / 1000 }))
    .sort((a, b) => b.s - a.s);
  if (files.length === 0) return '';
  const end = Math.max(...r.testResults.map((s) => s.endTime));
  const longest = files.slice(0, 3).map((f) => `${f.name} ${f.s.toFixed(0)} s`);
  return ` in ${((end - r.startTime) / 1000).toFixed(0)} s (longest: ${longest.join(', ')})`;
}
