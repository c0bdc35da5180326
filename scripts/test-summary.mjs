// Prints the plain closing line CI reads ("tests: N passed, N failed, N skipped") from vitest's JSON report.
import { readFileSync } from 'node:fs';

const reportPath = process.argv[2] ?? '.gds-tmp/vitest-report.json';
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const skipped = report.numPendingTests + report.numTodoTests;
process.stdout.write(
  `tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped\n`,
);
process.exitCode = report.numFailedTests > 0 || report.numTotalTests === 0 ? 1 : 0;
