// Prints the plain closing lines CI reads ("tests: N passed, N failed, N skipped", then each failed file with
// its failed tests and the first lines of each one's failure, as CI may keep only its log's end), summed over the vitest JSON reports named on the command line, and fails when a test or a file failed (a
// file whose set-up threw leaves its tests "skipped" but is itself failed), when none ran, or when a report
// is missing (its stage stopped before its tests ran: lint, typecheck or a build failed).
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

const reportPaths = process.argv.length > 2 ? process.argv.slice(2) : ['.gds-tmp/vitest-report.json'];
const totals = { passed: 0, failed: 0, skipped: 0, total: 0 };
/** Each failed file, then its failed tests and their first lines, indented. */
const failedFiles = [];
const missingReports = [];
for (const path of reportPaths) {
  if (!existsSync(path)) {
    missingReports.push(path);
    continue;
  }
  const report = JSON.parse(readFileSync(path, 'utf8'));
  totals.passed += report.numPassedTests;
  totals.failed += report.numFailedTests;
  totals.skipped += report.numPendingTests + report.numTodoTests;
  totals.total += report.numTotalTests;
  for (const file of report.testResults) {
    if (file.status !== 'failed') continue;
    const failures = file.assertionResults.filter((test) => test.status === 'failed');
    const reasons = failures.map((test) => ({
      name: test.fullName,
      message: test.failureMessages[0] ?? '',
    }));
    if (failures.length === 0)
      reasons.push({
        name: 'the file',
        message: file.message || 'its set-up failed: the log above says why',
      });
    failedFiles.push({ path: relative(process.cwd(), file.name), reasons });
  }
}
const lines = [`tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`];
if (failedFiles.length > 0) lines.push(`files: ${failedFiles.length} failed`);
for (const { path, reasons } of failedFiles) {
  lines.push(`  failed ${path}`);
  for (const { name, message } of reasons) {
    lines.push(`    × ${name}`);
    const firstLines = message.split('\n').filter((line) => !/^\s+at /.test(line));
    for (const line of firstLines.slice(0, 12)) lines.push(`      ${line}`);
  }
}
for (const path of missingReports) lines.push(`no report ${path}: its stage stopped before its tests ran`);
process.stdout.write(`${lines.join('\n')}\n`);
process.exitCode =
  totals.failed > 0 || failedFiles.length > 0 || missingReports.length > 0 || totals.total === 0 ? 1 : 0;
