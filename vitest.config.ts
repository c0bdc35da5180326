import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: [
      'default',
      ['json', { outputFile: process.env.GDS_VITEST_REPORT ?? '.gds-tmp/vitest-report.json' }],
    ],
  },
});
