// Prints the plain closing line CI reads ("tests: N passed, N failed, N skipped"), summed over the vitest
// JSON reports named on the command line, and fails when a test failed or none ran.
import { readFileSync } from 'node:fs';

const reportPaths = process.argv.length > 2 ? process.argv.slice(2) : ['.gds-tmp/vitest-report.json'];
const totals = { passed: 0, failed: 0, skipped: 0, total: 0 };
for (const path of reportPaths) {
  const report = JSON.parse(readFileSync(path, 'utf8'));
  totals.passed += report.numPassedTests;
  totals.failed += report.numFailedTests;
  totals.skipped += report.numPendingTests + report.numTodoTests;
  totals.total += report.numTotalTests;
}
process.stdout.write(`tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exitCode = totals.failed > 0 || totals.total === 0 ? 1 : 0;
