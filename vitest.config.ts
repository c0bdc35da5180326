import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import SkipReasonsReporter from './test/helpers/skip-reporter.js';

// Node's compile cache (the folder gds's bin/run.js uses), for the test processes and what they start: every
// test server's database and every gate sandbox is a PGlite in a worker thread of its own, which otherwise
// compiled PGlite's JavaScript again each time.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'node-compile-cache');

// The release files take minutes to build: `npm run test:release` builds them and runs test/release.
const exclude = [
  ...configDefaults.exclude,
  ...(process.env.GDS_TEST_RELEASE === '1' ? [] : ['test/release/**']),
  // The single executable's own tests run where it is built: `npm run test:e2e:binary` names it in GDS_TEST_CLI.
  ...(process.env.GDS_TEST_CLI === undefined ? ['test/binary/**'] : []),
];

// Files that may share a test process with the files run before them (isolate off): each still gets its servers,
// databases and home folder of its own, but the modules (the server, gds and what they import), the compiled
// PGlite and the contract's compiled schemas are loaded once per process instead of once per file. Under
// test/docs, test/demo and test/scripts, and the files in ISOLATED, each file has a process of its own.
// A helper module is loaded once per process too: a hook it registers as it loads (afterAll) belongs to the first
// file alone, and its module state outlives the file.
const SHARED_DIRS = [
  'server',
  'commands',
  'auth',
  'core',
  'client',
  'services',
  'io',
  'contract',
  'lint',
  'helpers',
  'cli',
  'e2e',
];
// Module mocks (vi.mock) and the process's own state (exit code, working folder, environment) under test;
// login-keychain talks to the Secret Service of the machine. completion and records-import share: each failed
// once in a shared run at load 19-32 (their in-process server, on PGlite then, answered after gds's own limits:
// completion's 2 s, now given 60 s by the test, and a 30 s bulk write), and passed shared four rounds in a row
// after other test/e2e files in one process, in shuffled order, at load 12-20 (PostgreSQL, as CI).
const ISOLATED = [
  'test/helpers/run-in-process.test.ts',
  'test/cli/review-walk.test.ts',
  'test/e2e/records-pacing.test.ts',
  'test/auth/refresh-lock-lost.test.ts',
  'test/e2e/login-keychain.test.ts',
  'test/services/recertify-state.test.ts',
  'test/auth/config-lock-takeover.test.ts',
  'test/auth/refresh-after-logout.test.ts',
  'test/server/gates/submit-in-flight.test.ts',
  'test/auth/refresh-lost-lock-keychain.test.ts',
  'test/services/dbt-run-sql-reads.test.ts',
  'test/auth/login-profile-changed.test.ts',
  'test/auth/save-profile-config-write-fails.test.ts',
  'test/auth/keychain-entry-per-save.test.ts',
];

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: [`test/{${SHARED_DIRS.join(',')}}/**/*.test.ts`],
          exclude: [...exclude, ...ISOLATED],
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/*.test.ts', `test/!(${SHARED_DIRS.join('|')})/**/*.test.ts`, ...ISOLATED],
          exclude,
        },
      },
    ],
    // A home folder of its own for every test file: no test reads or writes the gds files (settings, aliases,
    // profiles, caches) of whoever runs the suite. The HOME it replaces is given for the test that checks it.
    setupFiles: ['test/helpers/isolated-home.ts'],
    // The run's temp folder, removed at its end with whatever the tests left in it (the module says why).
    globalSetup: ['test/helpers/run-temp-folder.ts'],
    provide: { invokingHome: process.env.HOME ?? '' },
    // ensureBuilt (test/cli/helpers/cli-process.ts) leaves out sources changed after this moment.
    env: { GDS_TEST_RUN_STARTED_MS: String(Date.now()) },
    // A loaded machine (CI at a load of 20 on two cores) makes a test slower, and must not make it red: the limits
    // only end a test that hangs. Timing is measured by `npm run bench`, never by a test's limit.
    // A fresh-clone CI run at a load of 10-14 took 60-80 s for the longest tests (a bundle's code cache, the
    // keychain shared by 16 processes, a batched apply): 120 s left them no room for a busier machine.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // As `npm run server` does: WebAssembly compiled by V8's baseline compiler only. Without it the optimizing
    // tier recompiled PGlite's PostgreSQL in every test process that started a server (about 1.7 s of CPU and
    // 500 MB each, paid by every such file; the suite is CPU-bound).
    execArgv: ['--liftoff-only'],
    // Most files wait on servers and the CLI processes they start rather than compute: `npm test` runs three files
    // at a time even on two cores (vitest's default there is one, availableParallelism - 1). With two, an idle run
    // left the cores idle for about a third of its time. CI's executable pass (GDS_TEST_CLI) runs three too: paired
    // twice at a load of 4-14, 336 -> 239 s and 207 -> 150 s of wall, 131-148 s of CPU each. The release pass keeps two.
    maxWorkers: Math.max(process.env.GDS_TEST_RELEASE !== '1' ? 3 : 2, availableParallelism() - 1),
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line; its reporter then
    // ends the run with one line per reason tests were skipped for.
    reporters: [
      'default',
      new SkipReasonsReporter({ outputFile: process.env.GDS_VITEST_REPORT ?? '.gds-tmp/vitest-report.json' }),
    ],
  },
});
