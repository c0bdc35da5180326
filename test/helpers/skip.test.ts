// The skip guards and the reporter together, in a real `vitest run` of a small file in a temp folder:
// the run's last lines name each reason once with its count; a test that ran is not counted. A file whose set-up
// throws is a failure, in the reporter's lines and in .ci/run's closing summary (scripts/test-summary.mjs).
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, node24, repoRoot } from '../cli/helpers/cli-process.js';
import { NO_POSTGRES, NO_SHARED_FIXTURES } from './skip.js';

let dir: string;
let failingDir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-skip-'));
  const skipModule = JSON.stringify(join(repoRoot, 'test/helpers/skip.ts'));
  await writeFile(
    join(dir, 'sample.test.ts'),
    `import { describe, it } from 'vitest';
import { needs, NO_POSTGRES, NO_SHARED_FIXTURES } from ${skipModule};
describe('on a database', needs(NO_POSTGRES), () => {
  it('one', () => {});
  describe('nested', () => { it('two', () => {}); });
});
it('ran', needs(undefined), () => {});
it('reads a fixture', ({ skip }) => { skip(true, NO_SHARED_FIXTURES); });
`,
  );
  failingDir = await mkdtemp(join(tmpdir(), 'gds-setup-'));
  await writeFile(
    join(failingDir, 'server.test.ts'),
    `import { beforeAll, describe, it } from 'vitest';
describe('against a server', () => {
  beforeAll(() => { throw new Error('the server did not start'); });
  it('one', () => {});
  it('two', () => {});
});
`,
  );
  await writeFile(join(failingDir, 'fine.test.ts'), `import { it } from 'vitest';\nit('ran', () => {});\n`);
  await writeFile(
    join(failingDir, 'sums.test.ts'),
    `import { describe, expect, it } from 'vitest';\ndescribe('sums', () => { it('adds', () => { expect(1 + 1).toBe(3); }); });\n`,
  );
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  if (failingDir !== undefined) await rm(failingDir, { recursive: true, force: true });
});

function vitestRun(root: string) {
  const child = spawn(
    node24,
    [
      join(repoRoot, 'node_modules/vitest/vitest.mjs'),
      'run',
      '--root',
      root,
      '--reporter=default',
      `--reporter=${join(repoRoot, 'test/helpers/skip-reporter.ts')}`,
      `--outputFile=${join(root, 'report.json')}`,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', CI: '1' } },
  );
  return collect(child);
}

describe('a run with skipped tests', () => {
  it('ends with one line per reason, with the count of tests skipped for it', async () => {
    const result = await vitestRun(dir);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n').slice(-2)).toEqual([
      `skipped 2 tests: ${NO_POSTGRES}`,
      `skipped 1 test: ${NO_SHARED_FIXTURES}`,
    ]);
    // Still the JSON report .ci/run's closing line is summed from.
    const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as Record<string, number>;
    expect(report).toMatchObject({ numPassedTests: 1, numPendingTests: 3, numFailedTests: 0 });
  });
});

describe("a run where a file's set-up threw", () => {
  it('counts the file as failed, its tests as not run for that reason, and the CI summary fails', async () => {
    const result = await vitestRun(failingDir);
    expect(result.code).not.toBe(0);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(
      "skipped 2 tests: not run, their file's set-up failed (the server did not start)",
    );

    const summary = await collect(
      spawn(node24, [join(repoRoot, 'scripts/test-summary.mjs'), 'report.json', 'missing-report.json'], {
        cwd: failingDir,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    expect(summary.code).toBe(1);
    // Each failed file, and under it each failed test with its failure's first lines: what CI's log ends with.
    const lines = summary.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 2)).toEqual(['tests: 1 passed, 1 failed, 2 skipped', 'files: 2 failed']);
    const sums = lines.indexOf('  failed sums.test.ts');
    expect(lines.slice(sums, sums + 3)).toEqual([
      '  failed sums.test.ts',
      '    × sums adds',
      '      AssertionError: expected 2 to be 3 // Object.is equality',
    ]);
    const server = lines.indexOf('  failed server.test.ts');
    expect(lines.slice(server, server + 3)).toEqual([
      '  failed server.test.ts',
      '    × the file',
      '      its set-up failed: the log above says why',
    ]);
    expect(lines.at(-1)).toBe('no report missing-report.json: its stage stopped before its tests ran');
  });
});
