// Ends `vitest run` (and so `npm test`) with one line per reason tests were skipped for, e.g.
// `skipped 11 tests: no PostgreSQL (set GDS_TEST_DATABASE_URL)`. The reason comes from the meta that
// needs() (test/helpers/skip.ts) puts on a test or its describe, or from `ctx.skip(note)`.
// It is vitest's JSON reporter too (.ci/run's closing line reads that report): vitest runs reporters
// side by side, so only after the report is written (and said so) are the reason lines last.
import type { TestCase, TestModule, TestSuite } from 'vitest/node';
import { JsonReporter } from 'vitest/node';

// A test whose suite's set-up (beforeAll) threw is left "skipped" by vitest; it did not run because its
// set-up failed, which the run reports as a failed file, and the closing lines say so rather than "it.skip".
function failedSetUp(test: TestCase): string | undefined {
  let suite: TestSuite | TestModule = test.parent;
  for (;;) {
    const [error] = suite.errors();
    if (error !== undefined) return error.message;
    if (suite.type === 'module') return undefined;
    suite = suite.parent;
  }
}

function skipReason(test: TestCase): string {
  const fromMeta = test.meta().skipReason;
  if (fromMeta !== undefined) return fromMeta;
  const setUpError = failedSetUp(test);
  if (setUpError !== undefined) return `not run, their file's set-up failed (${setUpError.split('\n')[0]})`;
  const result = test.result();
  return (
    (result.state === 'skipped' ? result.note : undefined) ??
    'no reason stated (it.skip, or not selected by -t)'
  );
}

export function skipSummary(modules: ReadonlyArray<TestModule>): string[] {
  const counts = new Map<string, number>();
  for (const module of modules) {
    for (const test of module.children.allTests('skipped')) {
      const reason = skipReason(test);
      counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
  }
  return [...counts].map(([reason, n]) => `skipped ${n} test${n === 1 ? '' : 's'}: ${reason}`);
}

export default class SkipReasonsReporter extends JsonReporter {
  override async onTestRunEnd(modules: ReadonlyArray<TestModule>): Promise<void> {
    await super.onTestRunEnd(modules);
    const lines = skipSummary(modules);
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
  }
}
